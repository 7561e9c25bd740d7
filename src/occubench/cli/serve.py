"""``occubench serve``: one task's environment as an MCP server for any MCP client.

The session runs as the ``occubench/serve`` task through the runner (one sample, no
retries: a client's session cannot be replayed) and writes an ordinary ``.eval`` log
in a folder of its own under ``--log-dir``. Everything this command prints goes to
stderr: over stdio, stdout carries the protocol alone.

Over HTTP the client must send a token (``Authorization: Bearer <token>``): the one in
``$OCCUBENCH_SERVE_TOKEN``, else a new one printed at start. It is not an option, whose
value every local user can read from the process list.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import typer

from occubench.cli._common import (
    err_console,
    exit_with,
    from_options,
    terminal_rows,
    user_errors,
    warn_if_exposed,
)
from occubench.cli._settings import CLIENT_IS_AGENT, with_settings
from occubench.cli.run import checked_twins
from occubench.config import NO_AGENT_MODEL, EvalOptions, RunConfig
from occubench.defaults import DEFAULT_SERVE_PORT
from occubench.errors import ExitCode, UsageError
from occubench.roles import Role
from occubench.serving import DEFAULT_LINGER, Transport, Unsubmitted

SERVE_TASK = "occubench/serve"
"""Registry name of the serving task (``occubench.task.serve``)."""


def session_log_dir(root: str, task_id: int, env_mode: str) -> str:
    """A new folder under ``root`` for one session (a session is never resumed)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{root.rstrip('/')}/task-{task_id}-{env_mode}-{stamp}"


SERVE_EXCLUDED = ("task_ids", "industries", "domains", "difficulty", *CLIENT_IS_AGENT)
"""``RunConfig`` fields ``serve`` has no option for: the selection is ``--task``, and the MCP
client is the agent (no agent system, no agent loop of ours)."""


@with_settings(RunConfig, exclude=SERVE_EXCLUDED)
def serve(
    simulator_model: str = typer.Option(..., help="Simulator (LES) model."),
    task_id: int = typer.Option(..., "--task", help="The task to serve (its id)."),
    verifier_model: str | None = typer.Option(
        None,
        help="Verifier model, the grading LLM (default: the simulator; tasks with checks "
        "use only checks).",
    ),
    transport: Transport = typer.Option(  # noqa: B008 - an enum default is immutable
        Transport.STDIO, help="stdio (the client starts this command) or http (it connects)."
    ),
    host: str = typer.Option("127.0.0.1", help="HTTP address (this machine only by default)."),
    port: int = typer.Option(DEFAULT_SERVE_PORT, help="HTTP port (0: any free port)."),
    allowed_host: list[str] = typer.Option(  # noqa: B008 - typer's list option
        [],
        help="A host name HTTP clients may address the server by, besides the loopback "
        "names and --host (repeatable; other Host and Origin headers are refused).",
    ),
    unsubmitted: Unsubmitted = typer.Option(  # noqa: B008 - an enum default is immutable
        Unsubmitted.GRADE,
        help="A session ending without a submission: graded on what it did, or an error.",
    ),
    session_limit: float | None = typer.Option(
        None, help="Seconds before the session ends by itself (default: no limit)."
    ),
    linger: float = typer.Option(
        DEFAULT_LINGER, help="Seconds served after the submission (the verdict's way back)."
    ),
    log_dir: str = typer.Option(
        "logs/serve", help="Each session logs to a new folder under this one."
    ),
    **settings: Any,
) -> None:
    """Serve one task's environment over MCP; the submission is graded and logged.

    Tools are the environment's, plus the submit tool; the task is the MCP prompt
    'task' (also printed at start, to stderr). Faults, the simulator and the grading are
    those of `occubench run`; under --protocol occubench, tool arguments are checked
    against the schema and a bad call is an MCP tool error. Over HTTP every request must carry
    'Authorization: Bearer TOKEN': set TOKEN in $OCCUBENCH_SERVE_TOKEN, or use the one
    printed at start.
    """
    from occubench.report import summary_tables
    from occubench.results import read_runs
    from occubench.scale import absolute_location, run_eval
    from occubench.serving import serve_token

    with user_errors():
        if transport is Transport.HTTP:
            serve_token()  # a bad one is refused before anything starts
        config = from_options(RunConfig, {**settings, "task_ids": [task_id]})
        config = config.model_copy(update={"dataset": str(config.dataset_dir().resolve())})
        loaded = config.load_tasks()
        if not loaded.tasks:
            raise UsageError(f"no task {task_id} in {config.dataset}")
        envs = [loaded.envs[task.env_name] for task in loaded.tasks]
        config = checked_twins(config, simulator_model, envs)
        if config.world is not None:
            config = config.model_copy(
                update={"world": str(Path(config.world).expanduser().resolve())}
            )
        from occubench.agent import open_run_world

        open_run_world(config)  # a world that cannot be used as asked: said now
    if transport is Transport.HTTP:
        warn_if_exposed(
            host,
            "other machines can reach it; a client needs the token and must address an "
            "allowed host (--allowed-host NAME).",
        )
    out = session_log_dir(absolute_location(log_dir), task_id, config.env_mode.value)
    roles = {
        Role.SIMULATOR: simulator_model,
        **({Role.VERIFIER: verifier_model} if verifier_model else {}),
    }
    outcome = run_eval(
        SERVE_TASK,
        {
            **config.task_args(),
            "transport": transport.value,
            "host": host,
            "port": port,
            "unsubmitted": unsubmitted.value,
            "session_limit": session_limit,
            "linger": linger,
            "allowed_hosts": allowed_host,
        },
        log_dir=out,
        model=NO_AGENT_MODEL,
        roles=roles,
        options=EvalOptions(retry_on_error=0),
        role_args={Role.SIMULATOR: config.simulator_args()},
    )
    rows = read_runs(outcome.logs)
    err_console.print(f"Log: {out}", highlight=False, markup=False)
    for table in summary_tables(terminal_rows(rows)):
        err_console.print(table)
    for row in rows:
        if row.error:
            err_console.print(f"The session ended in an error: {row.error}", markup=False)
    if not outcome.success:
        exit_with(ExitCode.INCOMPLETE)
    if any(r.error for r in rows):
        exit_with(ExitCode.SAMPLE_ERRORS)

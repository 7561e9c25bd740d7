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

from typing import TYPE_CHECKING, Annotated, Any

import typer

from occubench.cli._common import (
    err_console,
    exit_with,
    from_options,
    terminal_rows,
    user_errors,
    warn_if_exposed,
)
from occubench.cli._options import (
    AllowedHost,
    Host,
    Port,
    SessionLogDir,
    SimulatorModel,
    VerifierModel,
)
from occubench.cli._settings import CLIENT_IS_AGENT, with_settings
from occubench.config import NO_AGENT_MODEL, RunConfig
from occubench.defaults import DEFAULT_SERVE_PORT
from occubench.errors import ExitCode
from occubench.roles import Role
from occubench.serving import DEFAULT_LINGER, Transport, Unsubmitted

if TYPE_CHECKING:
    from occubench.scale import EvalOutcome
    from occubench.serving import ServeOptions

EXPOSED = (
    "other machines can reach it; a client needs the token and must address an allowed host "
    "(--allowed-host NAME)."
)
"""What serving over HTTP on an address other machines reach means for them."""

SERVE_EXCLUDED = ("task_ids", "industries", "domains", "difficulty", *CLIENT_IS_AGENT)
"""``RunConfig`` fields ``serve`` has no option for: the selection is ``--task``, and the MCP
client is the agent (no agent system, no agent loop of ours)."""


@with_settings(RunConfig, exclude=SERVE_EXCLUDED)
def serve(
    simulator_model: SimulatorModel,
    task_id: Annotated[int, typer.Option("--task", help="The task to serve (its id).")],
    verifier_model: VerifierModel = None,
    transport: Annotated[
        Transport,
        typer.Option(help="stdio (the client starts this command) or http (it connects)."),
    ] = Transport.STDIO,
    host: Host = "127.0.0.1",
    port: Port = DEFAULT_SERVE_PORT,
    allowed_host: AllowedHost = [],  # noqa: B006 - typer copies a list default
    unsubmitted: Annotated[
        Unsubmitted,
        typer.Option(
            help="A session ending without a submission: graded on what it did, or an error."
        ),
    ] = Unsubmitted.GRADE,
    session_limit: Annotated[
        float | None,
        typer.Option(help="Seconds before the session ends by itself (default: no limit)."),
    ] = None,
    linger: Annotated[
        float, typer.Option(help="Seconds served after the submission (the verdict's way back).")
    ] = DEFAULT_LINGER,
    log_dir: SessionLogDir = "logs/serve",
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
    from occubench.scale import absolute_location, checked_twins
    from occubench.serving import (
        ServeOptions,
        served_task,
        served_world,
        session_log_dir,
    )

    served = ServeOptions(
        simulator_model,
        verifier_model,
        transport,
        host,
        port,
        unsubmitted,
        session_limit,
        linger,
        allowed_hosts=allowed_host,
    )
    with user_errors():
        served.check_token()
        config, envs = served_task(
            from_options(RunConfig, {**settings, "task_ids": [task_id]}), task_id
        )
        config = served_world(checked_twins(config, simulator_model, envs))
    if transport is Transport.HTTP:
        warn_if_exposed(host, EXPOSED)
    out = session_log_dir(absolute_location(log_dir), task_id, config.env_mode.value)
    outcome = _run_session(served, config, out)
    errors = _print_session(outcome.logs, out)
    if not outcome.success:
        exit_with(ExitCode.INCOMPLETE)
    if errors:
        exit_with(ExitCode.SAMPLE_ERRORS)


def _run_session(served: ServeOptions, config: RunConfig, out: str) -> EvalOutcome:
    """The session as the ``occubench/serve`` task, through the one runner, logged in ``out``."""
    from occubench.scale import run_eval
    from occubench.serving import SERVE_TASK

    return run_eval(
        SERVE_TASK,
        served.task_args(config),
        log_dir=out,
        model=NO_AGENT_MODEL,
        roles=served.roles(),
        options=served.eval_options(),
        role_args={Role.SIMULATOR: config.simulator_args()},
    )


def _print_session(logs: list[str], out: str) -> bool:
    """The session's log folder, summary and error (to stderr); whether it ended in one."""
    from occubench.report import summary_tables
    from occubench.results import read_runs

    rows = read_runs(logs)
    err_console.print(f"Log: {out}", highlight=False, markup=False)
    for table in summary_tables(terminal_rows(rows)):
        err_console.print(table)
    for row in rows:
        if row.error:
            err_console.print(f"The session ended in an error: {row.error}", markup=False)
    return any(r.error for r in rows)

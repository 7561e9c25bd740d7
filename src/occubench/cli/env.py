"""``occubench env new|check|try``: write an environment, check it, try one call.

``new`` writes a skeleton env and task in the release layout (FIELDS.md explains every
field; each string to write begins with TODO), ``check`` reports every problem of a
dataset folder at once (file, line, field) with each env's prompt size before any model
is called, and ``try`` shows the exact request the simulator is sent for one tool call
and the observation it gives (``occubench.authoring``).
"""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.table import Table

from occubench.cli._common import console, err_console, exit_with, user_errors
from occubench.cli._options import SimulatorModel
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_DATE, DEFAULT_PROTOCOL
from occubench.errors import ExitCode
from occubench.text import terminal_plain, terminal_text

app = typer.Typer(
    name="env",
    help="Write your own environments: a skeleton, a check before any model call, one call tried.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


def _say(text: str, style: str | None = None) -> None:
    console.print(text, style=style, markup=False, highlight=False, soft_wrap=True)


@app.command(name="new")
def new(
    name: Annotated[str, typer.Argument(help="The env's name: lower-case letters, digits, '_'.")],
    industry: Annotated[str, typer.Option(help="Its industry (the scenario pool's category).")],
    domain: Annotated[str, typer.Option(help="Its domain.")],
    scenario: Annotated[
        str | None,
        typer.Option(help="The professional role its tasks are set in (default: NAME in words)."),
    ] = None,
    folder: Annotated[
        Path, typer.Option("--dir", help="The dataset folder to write into (made if need be).")
    ] = Path("."),
) -> None:
    """Write a new environment and its first task, to fill in, into a dataset folder.

    Adds world_model_configs/NAME.json, a task line and (if new) a scenario line, in the
    release layout, and FIELDS.md, which explains every field. Each string still to
    write begins with TODO: 'occubench env check DIR' lists those left.
    """
    from occubench.authoring import new_env

    with user_errors():
        made = new_env(folder, name, industry=industry, domain=domain, scenario=scenario)
    _say(f"New env {made.env} with task {made.task_id} ({terminal_plain(made.scenario)}):")
    for path in made.written:
        _say(f"  {path}")
    for path in made.kept:
        _say(f"  {path} kept as it is (not written by occubench)")
    _say(
        f"Fill in every TODO (FIELDS.md says what each field holds), then: "
        f"occubench env check {folder}"
    )


def _config(protocol: str, state_mode: str, date: str) -> RunConfig:
    return RunConfig.model_validate({"protocol": protocol, "state_mode": state_mode, "date": date})


@app.command(name="check")
def check(
    folder: Annotated[Path, typer.Argument(help="The dataset folder.")],
    protocol: Annotated[
        str, typer.Option(help="The protocol whose simulator prompt is sized (paper, occubench).")
    ] = DEFAULT_PROTOCOL,
    state_mode: Annotated[
        str, typer.Option(help="history or explicit (the prompt differs).")
    ] = "history",
    date: Annotated[str, typer.Option(help="The fixed date the simulator is told.")] = DEFAULT_DATE,
) -> None:
    """Check a dataset folder before any model call: every problem at once, each env's size.

    Each problem names its file, line and field: files and fields, tool schemas (as
    Inspect builds the tools), tools a task names, the initial state against its
    description, placeholders (TODO) left. Exit 0 without problems (warnings are
    printed), 2 with.
    """
    from occubench.authoring import check_envs

    with user_errors():
        found = check_envs(folder, _config(protocol, state_mode, date))
    table = Table(title=f"Envs in {terminal_text(found.root)} ({found.tasks} task(s))")
    for column in (
        "env",
        "tools",
        "tasks",
        "simulator prompt chars",
        "~tokens",
        "tool defs ~tokens",
    ):
        table.add_column(column, justify="left" if column == "env" else "right")
    for size in found.sizes:
        table.add_row(
            terminal_text(size.env),
            str(size.tools),
            str(size.tasks),
            f"{size.prompt_chars:,}",
            f"{size.prompt_tokens:,}",
            f"{size.tool_tokens:,}",
        )
    console.print(table)
    for label, issues in (("Warning", found.warnings), ("Problem", found.problems)):
        for issue in issues:
            _say(f"{label}: {terminal_plain(issue)}", "yellow" if label == "Warning" else "red")
    _say(f"{len(found.problems)} problem(s), {len(found.warnings)} warning(s).")
    if not found.ok:
        exit_with(ExitCode.BAD_INPUT)


@app.command(name="try")
def try_(
    folder: Annotated[Path, typer.Argument(help="The dataset folder.")],
    *,
    env: Annotated[str, typer.Option(help="The env (its config's file stem).")],
    tool: Annotated[str, typer.Option(help="The tool to call.")],
    args: Annotated[str, typer.Option(help="Its arguments, a JSON object.")] = "{}",
    simulator_model: SimulatorModel,
    protocol: Annotated[
        str, typer.Option(help="The protocol's layout and argument rule (paper, occubench).")
    ] = DEFAULT_PROTOCOL,
    state_mode: Annotated[str, typer.Option(help="history or explicit (JSON Patch).")] = "history",
    date: Annotated[str, typer.Option(help="The fixed date the simulator is told.")] = DEFAULT_DATE,
    twins: Annotated[
        Path | None,
        typer.Option(help="A folder of twins the twin simulators (occubench/twin) answer from."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Ask the simulator for one tool call's observation; show the request as sent.

    Every request (re-asks included) is printed message by message as the simulator
    model got it, with its reply, then the observation as parsed and as the agent sees
    it. No fault is injected. Exit 2 on bad input, 3 when the simulator gave no usable
    observation.
    """
    from occubench.authoring import try_call
    from occubench.scripted import check_twin_run, is_twin_simulator

    with user_errors():
        config = _config(protocol, state_mode, date)
        if twins is not None or is_twin_simulator(simulator_model):
            from occubench.dataset import load_env

            check_twin_run(
                simulator_model, twins, [load_env(folder, env)], simulator_places_faults=False
            )
            config = config.model_copy(update={"twins": twins and str(twins.resolve())})
        # Inspect prints its version and hooks as the first model is built: not the request
        with contextlib.redirect_stdout(io.StringIO()):
            result = anyio.run(lambda: try_call(folder, env, tool, args, simulator_model, config))
    if as_json:
        console.print_json(result.model_dump_json())
        if result.error:
            exit_with(ExitCode.SAMPLE_ERRORS)
        return
    total = len(result.exchanges)
    for number, exchange in enumerate(result.exchanges, 1):
        _say(
            f"Simulator request {number} of {total} ({terminal_plain(result.simulator)}, "
            f"protocol {result.protocol}):",
            "bold",
        )
        for message in exchange.messages:
            _say(f"--- {message.role} ---", "cyan")
            _say(terminal_plain(message.content))
        _say("--- reply ---", "cyan")
        _say(terminal_plain(exchange.reply))
    if result.error:
        err_console.print(f"Simulator error: {terminal_plain(result.error)}", markup=False)
        exit_with(ExitCode.SAMPLE_ERRORS)
    _say("Observation, parsed:", "bold")
    _say(terminal_plain(json.dumps(result.observation, indent=2, ensure_ascii=False)))
    _say("What the agent sees:", "bold")
    _say(terminal_plain(result.shown))

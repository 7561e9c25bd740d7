"""The typer application: commands known by name and short help, each module loaded when used.

``occubench --version``, ``occubench --help`` and ``occubench COMMAND --help`` import only
what they show: a command's module (and with it Inspect, the model SDKs, the report
libraries) is imported when that command is looked up, never for the list of commands.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import version
from typing import TYPE_CHECKING

import typer
from typer.core import TyperCommand, TyperGroup

if TYPE_CHECKING:  # typer's own click (typer 0.26+), which its groups are typed with
    from typer._click import Command, Context, HelpFormatter


def _bundle_limits() -> str:
    from occubench.bundle import BUNDLE_LIMITS

    return BUNDLE_LIMITS.describe()


@dataclass(frozen=True)
class LazyCommand:
    """A command of ``occubench``, declared without importing its module.

    Attributes:
        module: its module in ``occubench.cli``.
        attr: the command function there, or a typer app (a group of commands).
        summary: the first sentence of its help, listed by ``occubench --help``
            (``tests/cli/test_lazy.py`` checks it against the command's own).
        epilog: the text after the command's options, made when the command is loaded.
    """

    module: str
    attr: str
    summary: str
    epilog: Callable[[], str] | None = None


COMMANDS: dict[str, LazyCommand] = {
    "run": LazyCommand(
        "run",
        "run",
        "Run agents on the dataset's tasks in the simulator, grade them, print the summary.",
    ),
    "list": LazyCommand(
        "list_cmd",
        "list_tasks",
        "Show the dataset's industries, domains, scenarios and task counts.",
    ),
    "demo": LazyCommand(
        "demo",
        "demo",
        "Run the reference agents on the built-in suite under E0-E3 (no API key, no network).",
    ),
    "floor": LazyCommand(
        "floor",
        "floor",
        "Measure the verifier's floor: how often it passes null agents, which do no work.",
    ),
    "report": LazyCommand(
        "report",
        "report",
        "Report completion rates, robustness R, comparisons and cost of runs, with 95% CIs.",
    ),
    "regrade": LazyCommand(
        "regrade",
        "regrade",
        "Grade the trajectories recorded in logs again, without running them.",
    ),
    "synth": LazyCommand(
        "synth",
        "synth",
        "Synthesize a benchmark from catalog scenarios: generate, validate, run, repair, select.",
    ),
    "converse": LazyCommand(
        "converse",
        "converse",
        "Turn a dataset's tasks into conversations: a user brief plus a shorter opening request.",
    ),
    "audit": LazyCommand(
        "audit",
        "audit",
        "Score each simulator's fidelity and flag the environments it fails in.",
    ),
    "compare-simulators": LazyCommand(
        "compare_simulators",
        "compare_simulators",
        "Ranking agreement, Kendall tau, score compression and flips between simulators.",
    ),
    "sweep": LazyCommand(
        "sweep",
        "sweep",
        "Run every combination a sweep file lists, then report on all of it.",
    ),
    "review": LazyCommand(
        "review",
        "review",
        "Serve a web app where experts grade samples and rate scenario and rubric realism.",
    ),
    "serve": LazyCommand(
        "serve",
        "serve",
        "Serve one task's environment over MCP; the submission is graded and logged.",
    ),
    "openenv": LazyCommand(
        "openenv",
        "openenv",
        "Serve the selected tasks over OpenEnv (reset/step/state), one task per episode.",
    ),
    "export": LazyCommand(
        "export",
        "export",
        "Export trajectories for training: OpenAI chat JSONL, ShareGPT JSON, Parquet.",
    ),
    "plan": LazyCommand(
        "plan",
        "plan",
        "Plan a comparison of two agents: tasks needed per epoch count for an MDD target.",
    ),
    "estimate": LazyCommand(
        "estimate",
        "estimate",
        "Estimate the tokens and cost of a run per role (agent, simulator, verifier, user).",
    ),
    "diagnose": LazyCommand(
        "diagnose",
        "diagnose",
        "Classify every failed trajectory (taxonomy below) with k votes of the verifier.",
    ),
    "bundle": LazyCommand(
        "bundle",
        "bundle",
        "Bundle runs into one archive someone else can check with occubench verify.",
    ),
    "verify": LazyCommand(
        "bundle",
        "verify",
        "Check a bundle: sums, bounds, secrets; recompute its numbers; standard or custom.",
        epilog=_bundle_limits,
    ),
    "leaderboard": LazyCommand(
        "leaderboard",
        "leaderboard",
        "Write a static leaderboard site from bundles, each verified first.",
    ),
    "play": LazyCommand(
        "play",
        "play",
        "Play a task as the agent, in the terminal or a browser; get the run's verdict.",
    ),
    "data": LazyCommand("data", "app", "Get benchmark data: the public OccuBench release."),
    "world": LazyCommand(
        "world",
        "app",
        "Look after worlds: recorded simulator answers that runs share and replay.",
    ),
    "env": LazyCommand(
        "env",
        "app",
        "Write your own environments: a skeleton, a check before any model call, one call tried.",
    ),
}
"""Every command, in the order ``occubench --help`` lists them."""


def load_command(name: str) -> Command:
    """Import a command's module and build the command as typer would have on the root.

    Raises:
        KeyError: no command of that name.
    """
    spec = COMMANDS[name]
    target = getattr(importlib.import_module(f"occubench.cli.{spec.module}"), spec.attr)
    holder = typer.Typer(rich_markup_mode=None, add_completion=False)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        epilog = spec.epilog() if spec.epilog else None
        holder.command(name=name, epilog=epilog)(target)
    return typer.main.get_group(holder).commands[name]


class LazyCommands(TyperGroup):
    """The root group: ``COMMANDS`` listed from their declarations, loaded when looked up."""

    def list_commands(self, ctx: Context) -> list[str]:
        """Every command's name, without importing any."""
        return list(COMMANDS)

    def get_command(self, ctx: Context, cmd_name: str) -> Command | None:
        """The command ``cmd_name``, its module imported now (None: no such command)."""
        if cmd_name not in COMMANDS:
            return None
        if cmd_name not in self.commands:
            self.commands[cmd_name] = load_command(cmd_name)
        return self.commands[cmd_name]

    def format_commands(self, ctx: Context, formatter: HelpFormatter) -> None:
        """The list of commands with their summaries, shortened as click shortens help."""
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [
            (name, TyperCommand(name, help=spec.summary).get_short_help_str(limit))
            for name, spec in COMMANDS.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    name="occubench",
    help="Evaluate AI agents on professional work inside Language Environment Simulators.",
    no_args_is_help=True,
    cls=LazyCommands,
    pretty_exceptions_enable=False,
    add_completion=False,
    # plain help: full option names at any width, descriptions wrapped (rich's panels
    # cut names at 80 columns)
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"occubench {version('occubench')} (inspect_ai {version('inspect_ai')})")
        raise typer.Exit()


@app.callback()
def _root(
    show_version: bool = typer.Option(
        False,
        "--version",
        callback=_version,
        is_eager=True,
        help="Print the versions of occubench and Inspect AI, then exit.",
    ),
) -> None:
    """Evaluate AI agents on professional work inside Language Environment Simulators.

    Exit codes: 0 done (every sample scored), 1 incomplete (run the same command again
    to resume), 2 bad input or a failed preflight, 3 some samples ended in
    infrastructure errors (not scored), 130 interrupted.
    """
    dotenv_notice()


ROUTING_VARIABLES = ("_BASE_URL", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
"""Variable name endings that decide where model calls, and their keys, are sent."""


def dotenv_notice() -> None:
    """Name the ``.env`` file Inspect will read and the variables it sets (never their values).

    Inspect loads the first ``.env`` found in the current folder or above it into the
    environment of the run and its workers. A folder that is not the user's own (a
    clone) could route model calls, with the user's keys, to another server that way;
    the notice makes that visible before any call.
    """
    from dotenv import dotenv_values, find_dotenv  # Inspect's own dependency and rule

    found = find_dotenv(usecwd=True)
    if not found:
        return
    names = sorted(n for n in dotenv_values(found) if n not in os.environ)
    if not names:
        return
    routing = [n for n in names if n.upper().endswith(ROUTING_VARIABLES)]
    line = f"Inspect reads {found}: it sets {', '.join(names)}"
    if routing:
        line += f" ({', '.join(routing)}: model calls and their keys go where it says)"
    from occubench.cli._common import err_console  # the commands' console: when there is a notice
    from occubench.text import terminal_plain

    err_console.print(terminal_plain(line), markup=False, highlight=False, soft_wrap=True)


def main() -> None:
    """Console-script entry point: run the command, then exit without teardown."""
    try:
        app()
    except SystemExit as done:
        _exit(done.code)
    _exit(0)


def _exit(code: int | str | None) -> None:
    """End the process: without teardown once a command has loaded Inspect (``exit_now``).

    An ordinary exit is as quick before Inspect is imported (``--version``, ``--help``),
    and importing it there only to skip its teardown would cost seconds.
    """
    if "inspect_ai" in sys.modules:
        from occubench.scale import exit_now

        exit_now(code)
    sys.exit(code)

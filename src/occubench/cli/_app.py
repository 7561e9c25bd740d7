"""The typer application; each command lives in its own module."""

from __future__ import annotations

import os
from importlib.metadata import version

import typer

from occubench.bundle import BUNDLE_LIMITS
from occubench.cli import (
    audit,
    bundle,
    compare_simulators,
    data,
    demo,
    diagnose,
    env,
    estimate,
    export,
    leaderboard,
    list_cmd,
    plan,
    play,
    regrade,
    report,
    review,
    run,
    serve,
    sweep,
    synth,
    world,
)
from occubench.cli._common import err_console
from occubench.scale import exit_now
from occubench.text import terminal_text

app = typer.Typer(
    name="occubench",
    help="Evaluate AI agents on professional work inside Language Environment Simulators.",
    no_args_is_help=True,
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
    err_console.print(terminal_text(line), markup=False, highlight=False, soft_wrap=True)


app.command(name="run")(run.run)
app.command(name="list")(list_cmd.list_tasks)
app.command(name="demo")(demo.demo)
app.command(name="report")(report.report)
app.command(name="regrade")(regrade.regrade)
app.command(name="synth")(synth.synth)
app.command(name="audit")(audit.audit)
app.command(name="compare-simulators")(compare_simulators.compare_simulators)
app.command(name="sweep")(sweep.sweep)
app.command(name="review")(review.review)
app.command(name="serve")(serve.serve)
app.command(name="export")(export.export)
app.command(name="plan")(plan.plan)
app.command(name="estimate")(estimate.estimate)
app.command(name="diagnose")(diagnose.diagnose)
app.command(name="bundle")(bundle.bundle)
app.command(name="verify", epilog=BUNDLE_LIMITS.describe())(bundle.verify)
app.command(name="leaderboard")(leaderboard.leaderboard)
app.add_typer(data.app, name="data")
app.add_typer(world.app, name="world")
app.command(name="play")(play.play)
app.add_typer(env.app, name="env")


def main() -> None:
    """Console-script entry point: run the command, then exit without teardown."""
    try:
        app()
    except SystemExit as done:
        exit_now(done.code)
    exit_now(0)

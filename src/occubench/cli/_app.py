"""The typer application; each command lives in its own module."""

from __future__ import annotations

from importlib.metadata import version

import typer

from occubench.cli import (
    audit,
    compare_simulators,
    data,
    demo,
    diagnose,
    estimate,
    export,
    list_cmd,
    plan,
    report,
    review,
    run,
    serve,
    sweep,
    synth,
)
from occubench.interpreter import exit_now

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


app.command(name="run")(run.run)
app.command(name="list")(list_cmd.list_tasks)
app.command(name="demo")(demo.demo)
app.command(name="report")(report.report)
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
app.add_typer(data.app, name="data")


def main() -> None:
    """Console-script entry point: run the command, then exit without teardown."""
    try:
        app()
    except SystemExit as done:
        exit_now(done.code)
    exit_now(0)

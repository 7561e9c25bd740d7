"""``occubench estimate``: tokens and dollars per role of a run, before it runs.

It takes ``occubench run``'s options of what the run computes (the ``RunConfig`` fields,
generated from them, the models, the epochs and the price table: the same parameters,
taken from ``run``'s signature, so the two commands cannot drift apart), plus the
estimate's assumptions and ``--compare LOGS`` to set the estimate against the tokens a
finished run measured.
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

import typer

from occubench.cli import run as run_command
from occubench.cli._common import console, from_options, model_roles, user_errors
from occubench.cli._settings import own_parameters, set_signature
from occubench.config import NO_AGENT_MODEL, ResolvedRun, RunConfig
from occubench.errors import UsageError

MODEL_OPTIONS = (
    "agent_model",
    "simulator_model",
    "verifier_model",
    "sim_fallback_model",
    "user_model",
    "model_role",
)
RUN_OPTIONS = (*MODEL_OPTIONS, *RunConfig.model_fields, "epochs", "prices")
"""``occubench run``'s options that ``estimate`` takes too."""


def estimate(
    agent_retries: Annotated[
        bool, typer.Option(help="Assume the agent makes a call that failed (explicit fault) again.")
    ] = True,
    calls_per_step: Annotated[
        int,
        typer.Option(min=1, help="Times the agent makes each planned call (re-reads to confirm)."),
    ] = 1,
    compare: Annotated[
        list[str] | None,
        typer.Option(help="Logs of a finished run: show its measured tokens per role too."),
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Write the whole estimate (JSON) to this file.")
    ] = None,
    **given: Any,
) -> None:
    """Estimate the tokens and cost of a run per role (agent, simulator, verifier, user).

    Each task is played through with the prompts the run would send: its planned calls
    (reference plan, else its expected calls over the env's tools), the fault plan's
    explicit errors, the simulator's growing history, the verifier's k votes, and on a
    task with a user the user's replies (a question per fact it holds back, a closing).
    """
    from occubench.costs import Assumptions, compare_estimate, estimate_run, load_prices
    from occubench.report import comparison_table, estimate_table
    from occubench.results import read_runs

    with user_errors():
        run = ResolvedRun.of(from_options(RunConfig, given))
        if given["agent_model"] is None and not run.config.agent_command:
            raise UsageError(
                "--agent-model (or --model) is required (optional only with --agent-command)"
            )
        prices = load_prices(given["prices"]) if given["prices"] else None
        assumptions = Assumptions(agent_retries=agent_retries, calls_per_step=calls_per_step)
        result = estimate_run(
            run,
            agent=given["agent_model"] or NO_AGENT_MODEL,
            roles=model_roles(given),
            epochs=given["epochs"],
            prices=prices,
            assumptions=assumptions,
        )
        measured = read_runs(compare) if compare else None
    console.print(estimate_table(result))
    for note in result.notes:
        console.print(f"Not counted: {note}.", highlight=False)
    if result.unpriced_models:
        console.print(f"No price for: {', '.join(result.unpriced_models)}", markup=False)
    if measured is not None:
        console.print(comparison_table(compare_estimate(result, measured)))
    if out is not None:
        out.write_text(result.model_dump_json(indent=2))


def _run_parameters() -> list[inspect.Parameter]:
    """``occubench run``'s options that ``estimate`` takes too (the very same options)."""
    taken = inspect.signature(run_command.run, eval_str=True).parameters
    return [taken[name] for name in RUN_OPTIONS]


set_signature(estimate, [*_run_parameters(), *own_parameters(estimate)])

"""``occubench audit``: probe simulators and score how faithfully they simulate."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Annotated, Any

import typer

from occubench.calls import named_model
from occubench.cli._common import console, dataset_dir, user_errors
from occubench.cli._settings import with_settings
from occubench.config import RunConfig
from occubench.dataset import load_dataset
from occubench.defaults import (
    DEFAULT_AUDIT_CONCURRENCY,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_SEED,
)
from occubench.fidelity import NO_VERIFIER, audit_tables, run_audit


def default_audit_dir(models: list[str | None], dataset: str, settings: dict[str, Any]) -> str:
    """A log folder named after what the audit computes: the same command finds it again."""
    what = json.dumps({"models": models, "dataset": dataset, **settings}, sort_keys=True)
    return f"logs/occubench-audit-{hashlib.sha256(what.encode()).hexdigest()[:10]}"


@with_settings(RunConfig, only=("dataset",))
def audit(
    simulator_model: Annotated[
        list[str],
        typer.Option(help="Simulator model to audit; repeat the option to compare several."),
    ],
    verifier_model: Annotated[
        str | None,
        typer.Option(help="Verifier of rule invention (without one, that part is not measured)."),
    ] = None,
    sample_rule_checks: Annotated[
        int, typer.Option(help="Observations per simulator the verifier checks for invented rules.")
    ] = DEFAULT_AUDIT_RULE_CHECKS,
    plans_per_env: Annotated[
        int, typer.Option(help="Task plans replayed per environment.")
    ] = DEFAULT_AUDIT_PLANS_PER_ENV,
    seed: Annotated[int, typer.Option(help="Seed of the rule-invention sample.")] = DEFAULT_SEED,
    date: Annotated[str, typer.Option(help="Date given to the simulators.")] = DEFAULT_DATE,
    max_concurrency: Annotated[
        int, typer.Option(help="Probe trajectories and verifier calls at once.")
    ] = DEFAULT_AUDIT_CONCURRENCY,
    out: Annotated[
        Path | None, typer.Option(help="Write the full audit (JSON) to this file.")
    ] = None,
    log_dir: Annotated[
        str | None,
        typer.Option(help="Log folder (default: logs/occubench-audit-<hash of the arguments>)."),
    ] = None,
    **chosen: Any,
) -> None:
    """Score each simulator's fidelity and flag the environments it fails in.

    Parts: fabrication, omission, determinism, schema conformity, unknown-id handling
    and, with a verifier, rule invention.
    """
    with user_errors():
        data = load_dataset(dataset_dir(chosen["dataset"]))
        models = [named_model(name) for name in simulator_model]
        judge = named_model(verifier_model) if verifier_model else None
    settings: dict[str, Any] = dict(
        rule_checks=sample_rule_checks, date=date, seed=seed, max_plans=plans_per_env
    )
    folder = log_dir or default_audit_dir(
        [*simulator_model, verifier_model], str(data.root), settings
    )
    console.print(f"Logs: {folder}  (run the same command again to resume)", highlight=False)
    report = run_audit(
        models,
        data,
        verifier=judge,
        max_concurrency=max_concurrency,
        log_dir=folder,
        **settings,
    )
    for table in audit_tables(report):
        console.print(table)
    calls = sum(len(t.probes) for t in report.probes)
    weights = ", ".join(f"{m.value} {w:g}" for m, w in report.weights.items())
    console.print(
        f"{len(report.probes)} probe trajectories ({calls} calls) in {len(data.envs)} "
        f"environments per simulator. Fidelity = weighted mean of the measured parts "
        f"(weights: {weights}).",
        highlight=False,
    )
    if judge is None:
        console.print(f"Rule invention {NO_VERIFIER}.", highlight=False)
    for sim in report.simulators:
        if sim.errors:
            console.print(
                f"{sim.model}: {len(sim.errors)} trajectories ended early on a simulator "
                f"error (first: {sim.errors[0]})",
                highlight=False,
                markup=False,
            )
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report.model_dump_json(indent=2))
        console.print(f"Full audit: {out}", highlight=False)

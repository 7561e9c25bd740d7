"""``occubench audit``: probe simulators and score how faithfully they simulate."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from pydantic import TypeAdapter

from occubench.cli._common import console, dataset_dir, from_options, user_errors
from occubench.cli._settings import with_settings
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import load_dataset
from occubench.defaults import (
    DEFAULT_AUDIT_CONCURRENCY,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_SEED,
    DEFAULT_TWIN_TOLERANCE,
)
from occubench.text import terminal_plain

if TYPE_CHECKING:
    from collections.abc import Sequence

    from inspect_ai.model import Model

    from occubench.dataset import Dataset
    from occubench.fidelity import AuditReport, AuditWorld, GoldReport, ProbeSettings, TwinAudit


AuditedSimulators = Annotated[
    list[str], typer.Option(help="Simulator model to audit; repeat the option to compare several.")
]
RuleVerifier = Annotated[
    str | None,
    typer.Option(help="Verifier of rule invention (without one, that part is not measured)."),
]
RuleChecks = Annotated[
    int, typer.Option(help="Observations per simulator the verifier checks for invented rules.")
]
PlansPerEnv = Annotated[int, typer.Option(help="Task plans replayed per environment.")]
RuleSeed = Annotated[int, typer.Option(help="Seed of the rule-invention sample.")]
SimulatorDate = Annotated[str, typer.Option(help="Date given to the simulators.")]
AuditConcurrency = Annotated[
    int, typer.Option(help="Probe trajectories and verifier calls at once.")
]
GoldToReplay = Annotated[
    Path | None,
    typer.Option(
        help="A gold world (answers people wrote, `play --as simulator`): replay each of "
        "its paths and score each simulator's answers against the person's instead of "
        "probing (--dataset, --protocol, --state-mode and --date as it was written)."
    ),
]
TwinSteps = Annotated[
    bool,
    typer.Option(
        "--twin",
        help="Step fidelity against the twins: replay probe (and --from-logs) trajectories "
        "step by step against each environment's twin and each simulator, fed the twin's "
        "history; --out writes the TwinFidelity records.",
    ),
]
TwinLogs = Annotated[
    Path | None, typer.Option(help="--twin: also replay the agents' tool calls of these logs.")
]
TwinTrajectories = Annotated[
    list[Path] | None,
    typer.Option(
        "--trajectories",
        help="--twin: also replay the trajectories of this JSON file (a list of "
        "{environment, name, calls: [{tool, arguments}]}); repeat for several files.",
    ),
]
FreeRunning = Annotated[
    bool, typer.Option(help="--twin: also replay each simulator on its own history (drift).")
]
TwinTolerance = Annotated[float, typer.Option(help="--twin: relative tolerance of numeric fields.")]
AuditOut = Annotated[Path | None, typer.Option(help="Write the full audit (JSON) to this file.")]
AuditLogDir = Annotated[
    str | None,
    typer.Option(help="Log folder (default: logs/occubench-audit-<hash of the arguments>)."),
]


@with_settings(
    RunConfig,
    only=("dataset", "protocol", "state_mode", "world", "world_mode", "world_variant", "twins"),
)
def audit(
    simulator_model: AuditedSimulators,
    verifier_model: RuleVerifier = None,
    sample_rule_checks: RuleChecks = DEFAULT_AUDIT_RULE_CHECKS,
    plans_per_env: PlansPerEnv = DEFAULT_AUDIT_PLANS_PER_ENV,
    seed: RuleSeed = DEFAULT_SEED,
    date: SimulatorDate = DEFAULT_DATE,
    max_concurrency: AuditConcurrency = DEFAULT_AUDIT_CONCURRENCY,
    gold: GoldToReplay = None,
    twin: TwinSteps = False,
    from_logs: TwinLogs = None,
    trajectories: TwinTrajectories = None,
    free_running: FreeRunning = False,
    tolerance: TwinTolerance = DEFAULT_TWIN_TOLERANCE,
    out: AuditOut = None,
    log_dir: AuditLogDir = None,
    **chosen: Any,
) -> None:
    """Score each simulator's fidelity and flag the environments it fails in.

    Parts: fabrication, omission, determinism, schema conformity, unknown-id handling
    and, with a verifier, rule invention. With --twin: each step against the twin's.
    """
    from occubench.calls import named_model
    from occubench.fidelity import (
        AuditKind,
        ProbeSettings,
        audit_kind,
        audit_world,
        gold_audit,
        twin_audit,
    )

    with user_errors():
        data = load_dataset(dataset_dir(chosen["dataset"]))
        models = [named_model(name) for name in simulator_model]
        judge = named_model(verifier_model) if verifier_model else None
        world = audit_world(from_options(RunConfig, chosen))
        kind = audit_kind(
            twin=twin,
            gold=gold,
            world=world,
            twins=chosen.get("twins"),
            from_logs=from_logs,
            trajectories=trajectories or [],
            free_running=free_running,
        )
        if kind is not AuditKind.PROBES:
            run = ResolvedRun.of(from_options(RunConfig, {**chosen, "date": date}))
        if kind is AuditKind.TWIN:
            found_twin = twin_audit(
                run,
                models,
                logs=from_logs,
                trajectories=trajectories or [],
                free_running=free_running,
                tolerance=tolerance,
                concurrency=max_concurrency,
                max_plans=plans_per_env,
            )
        elif kind is AuditKind.GOLD and gold is not None:
            found = gold_audit(gold, models, run, verifier=judge, concurrency=max_concurrency)
    if kind is AuditKind.TWIN:
        return _print_twin(found_twin, out)
    if kind is AuditKind.GOLD:
        return _print_gold(found, out)
    settings = ProbeSettings(
        rule_checks=sample_rule_checks, date=date, seed=seed, max_plans=plans_per_env
    )
    names = [*simulator_model, verifier_model]
    folder = log_dir or settings.default_log_dir(names, str(data.root), world)
    _probe(models, data, settings, judge, world, folder, max_concurrency, out)


def _probe(
    models: Sequence[Model],
    data: Dataset,
    settings: ProbeSettings,
    judge: Model | None,
    world: AuditWorld | None,
    folder: str,
    concurrency: int,
    out: Path | None,
) -> None:
    """Probe each simulator (logging to ``folder``, resumable) and print the audit."""
    from occubench.fidelity import probe_audit

    console.print(f"Logs: {folder}  (run the same command again to resume)", highlight=False)
    with user_errors():
        report = probe_audit(
            models,
            data,
            settings,
            verifier=judge,
            concurrency=concurrency,
            log_dir=folder,
            world=world,
        )
    _print_probes(report, len(data.envs), judge is None, out)


def _write_json(out: Path | None, text: str | bytes, what: str) -> None:
    """Write ``text`` to ``out`` (its folder made), and say where, if ``out`` is given."""
    if out is None:
        return
    out.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        out.write_bytes(text)
    else:
        out.write_text(text)
    console.print(f"{what}: {out}", highlight=False)


def _print_probes(report: AuditReport, envs: int, no_judge: bool, out: Path | None) -> None:
    """The probe audit's tables, how fidelity is weighted, the simulators' errors."""
    from occubench.fidelity import NO_VERIFIER, audit_tables

    for table in audit_tables(report):
        console.print(table)
    calls = sum(len(t.probes) for t in report.probes)
    weights = ", ".join(f"{m.value} {w:g}" for m, w in report.weights.items())
    console.print(
        f"{len(report.probes)} probe trajectories ({calls} calls) in {envs} "
        f"environments per simulator. Fidelity = weighted mean of the measured parts "
        f"(weights: {weights}).",
        highlight=False,
    )
    if no_judge:
        console.print(f"Rule invention {NO_VERIFIER}.", highlight=False)
    for sim in report.simulators:
        if sim.errors:
            console.print(
                f"{sim.model}: {len(sim.errors)} trajectories ended early on a simulator "
                f"error (first: {sim.errors[0]})",
                highlight=False,
                markup=False,
            )
    _write_json(out, report.model_dump_json(indent=2), "Full audit")


def _print_gold(report: GoldReport, out: Path | None) -> None:
    """The tables of an audit against gold, its notes, and the JSON report if asked."""
    from occubench.fidelity import NO_VERIFIER, gold_table

    console.print(gold_table(report))
    console.print(gold_table(report, by_env=True))
    console.print(
        f"Gold world {terminal_plain(report.world)} (digest "
        f"{terminal_plain(report.world_digest[:16])}...). Against gold = "
        "mean over entries of their parts' mean. Parts: JSON object; keys (key-path Jaccard); "
        "complete (the gold's values present); grounded (no value the gold lacks); ids and "
        "numbers (exact), text (normalised); consistent (online checks against the initial "
        "state and the path); realism (the verifier's verdict).",
        highlight=False,
        markup=False,
    )
    if report.verifier_model is None:
        console.print(f"Realism {NO_VERIFIER}.", highlight=False)
    for line in [*report.notes, *report.errors[:5]]:
        console.print(f"note: {terminal_plain(line)}", highlight=False, markup=False)
    _write_json(out, report.model_dump_json(indent=2), "Full audit")


def _print_twin(found: TwinAudit, out: Path | None) -> None:
    """The step-fidelity tables, the environments without a twin, and the records if asked."""
    from occubench.fidelity import twin_tables
    from occubench.twins import TwinFidelity

    for table in twin_tables(found.records):
        console.print(table)
    steps = sum(len(t.calls) for t in found.trajectories)
    tolerance = found.records[0].tolerance if found.records else DEFAULT_TWIN_TOLERANCE
    console.print(
        f"{len(found.trajectories)} trajectories ({steps} steps) per simulator, in "
        f"{', '.join(sorted({t.environment for t in found.trajectories}))}; numbers equal "
        f"within {tolerance:g} relative; free fields not compared.",
        highlight=False,
        markup=False,
    )
    if found.skipped:
        console.print(
            f"No twin (skipped): {', '.join(found.skipped)}", highlight=False, markup=False
        )
    for line in found.notes[:5]:
        console.print(f"note: {terminal_plain(line)}", highlight=False, markup=False)
    records = TypeAdapter(list[TwinFidelity]).dump_json(found.records, indent=2)
    _write_json(out, records, "Step fidelity records")

"""Which audit ``occubench audit`` runs, its world, and a probe audit's settings and folder."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from inspect_ai.model import Model

from occubench.config import RunConfig
from occubench.dataset import Dataset
from occubench.defaults import (
    DEFAULT_AUDIT_CONCURRENCY,
    DEFAULT_AUDIT_PLANS_PER_ENV,
    DEFAULT_AUDIT_RULE_CHECKS,
    DEFAULT_DATE,
    DEFAULT_SEED,
)
from occubench.errors import UsageError
from occubench.fidelity._audit import AuditReport, run_audit
from occubench.fidelity._audit_eval import AuditWorld


class AuditKind(str, Enum):
    """The audits of ``occubench audit``."""

    PROBES = "probes"
    """Probe trajectories replayed against each simulator (``run_audit``)."""
    GOLD = "gold"
    """Each simulator's answers held against a gold world's (``gold_audit``)."""
    TWIN = "twin"
    """Each step held against the environment's twin (``twin_audit``)."""


def audit_kind(
    *,
    twin: bool,
    gold: Path | None,
    world: AuditWorld | None,
    twins: str | None = None,
    from_logs: Path | None = None,
    trajectories: Sequence[Path] = (),
    free_running: bool = False,
) -> AuditKind:
    """The audit the options ask for.

    Raises:
        UsageError: options of one audit given to another (a world with the twin or gold
            audit, the twin audit's inputs without ``--twin``).
    """
    if twin:
        if gold is not None or world is not None:
            raise UsageError("--twin replays against the twins: leave out --gold and --world")
        return AuditKind.TWIN
    if twins is not None or from_logs is not None or free_running or trajectories:
        raise UsageError("--twins, --from-logs, --trajectories and --free-running go with --twin")
    if gold is not None:
        if world is not None:
            raise UsageError("--gold replays the gold world itself: leave out --world")
        return AuditKind.GOLD
    return AuditKind.PROBES


def audit_world(config: RunConfig) -> AuditWorld | None:
    """The world of a configuration (its path resolved, mode and variant), or None."""
    if config.world is None:
        return None
    return AuditWorld(
        path=str(Path(config.world).expanduser().resolve()),
        mode=config.world_mode,
        variant=config.world_variant,
    )


@dataclass(frozen=True)
class ProbeSettings:
    """What a probe audit computes besides its models and dataset (``run_audit``'s settings)."""

    rule_checks: int = DEFAULT_AUDIT_RULE_CHECKS
    date: str = DEFAULT_DATE
    seed: int = DEFAULT_SEED
    max_plans: int = DEFAULT_AUDIT_PLANS_PER_ENV

    def default_log_dir(
        self, models: Sequence[str | None], dataset: str, world: AuditWorld | None
    ) -> str:
        """A log folder named after what the audit computes: the same command finds it again."""
        settings: dict[str, object] = dict(
            rule_checks=self.rule_checks, date=self.date, seed=self.seed, max_plans=self.max_plans
        )
        if world is not None:
            settings["world"] = world.task_args()
        what = json.dumps({"models": list(models), "dataset": dataset, **settings}, sort_keys=True)
        return f"logs/occubench-audit-{hashlib.sha256(what.encode()).hexdigest()[:10]}"


def probe_audit(
    models: Sequence[Model],
    dataset: Dataset,
    settings: ProbeSettings,
    *,
    verifier: Model | None = None,
    concurrency: int = DEFAULT_AUDIT_CONCURRENCY,
    log_dir: str | None = None,
    world: AuditWorld | None = None,
) -> AuditReport:
    """``run_audit`` of ``models`` on ``dataset`` with ``settings``."""
    return run_audit(
        models,
        dataset,
        verifier=verifier,
        rule_checks=settings.rule_checks,
        date=settings.date,
        seed=settings.seed,
        max_plans=settings.max_plans,
        max_concurrency=concurrency,
        log_dir=log_dir,
        world=world,
    )

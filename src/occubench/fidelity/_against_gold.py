"""The simulators of a set of runs held against a gold world (``report --gold``).

People (``human/NAME``) are not audited: only the models among the simulators named are
asked the gold world's calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from inspect_ai.model import Model, get_model

from occubench.calls import resilient
from occubench.config import ResolvedRun
from occubench.fidelity._gold import gold_audit

if TYPE_CHECKING:
    from occubench.report import GoldAgreement


def machine_models(simulators: Sequence[str]) -> list[Model]:
    """The simulators that are models, built resilient; people and empty names left out."""
    from occubench.play import HUMAN_PROVIDER

    people = f"{HUMAN_PROVIDER}/"
    return [
        resilient(get_model(name)) for name in simulators if name and not name.startswith(people)
    ]


def gold_agreements(
    world: Path, simulators: Sequence[str], run: ResolvedRun
) -> list[GoldAgreement]:
    """Each model simulator's agreement with the gold world over all its environments.

    Raises:
        UsageError: not a world, or no entry of a person that the dataset given matches.
    """
    from occubench.report import GoldAgreement

    machines = machine_models(simulators)
    if not machines:
        return []
    audited = gold_audit(world, machines, run)
    return [
        GoldAgreement(
            simulator=g.simulator,
            world=str(world),
            entries=g.entries,
            mean=g.agreement.mean,
            low=g.agreement.low,
            high=g.agreement.high,
        )
        for g in audited.groups
        if g.env_name is None
    ]

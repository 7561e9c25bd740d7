"""Fault injection: env modes, seeded fault plans, injectors."""

from occubench.faults._injectors import Degradation, degrade, explicit_error
from occubench.faults._kinds import EXPLICIT_KINDS, IMPLICIT_KINDS, FaultKind
from occubench.faults._modes import EnvMode, FaultEngine
from occubench.faults._plan import FaultEvent, FaultPlan, make_fault_plan
from occubench.faults._prompt_rules import prompt_fault_rules
from occubench.faults._session import FaultSession, FaultSettings, InjectedFault, changed_paths
from occubench.faults._taxonomy import (
    FAMILIES,
    FamilyContext,
    FamilyEvent,
    FaultFamily,
    make_family_events,
    parse_families,
)

__all__ = [
    "FAMILIES",
    "EXPLICIT_KINDS",
    "IMPLICIT_KINDS",
    "Degradation",
    "EnvMode",
    "FaultEngine",
    "FamilyContext",
    "FamilyEvent",
    "FaultEvent",
    "FaultFamily",
    "FaultKind",
    "FaultPlan",
    "FaultSession",
    "FaultSettings",
    "InjectedFault",
    "changed_paths",
    "degrade",
    "explicit_error",
    "make_family_events",
    "make_fault_plan",
    "parse_families",
    "prompt_fault_rules",
]

"""Fault injection: env modes, the fault registry (E1-E3 and families), plans, the injector."""

from occubench.faults._events import FaultEvent, FaultPlan, Scope
from occubench.faults._injectors import Degradation, degrade, explicit_error
from occubench.faults._kinds import EXPLICIT_KINDS, IMPLICIT_KINDS, FaultFamily, FaultKind
from occubench.faults._modes import EnvMode, FaultEngine
from occubench.faults._placement import PlacementContext, spread_starts
from occubench.faults._prompt_rules import (
    PAPER_ERROR_BODIES,
    FaultRules,
    paper_fault_rules,
    prompt_fault_rules,
)
from occubench.faults._registry import (
    FAULT_TYPES,
    Call,
    FaultType,
    Injection,
    SimulatorAccess,
    changed_paths,
    fault_type,
    register_fault_type,
)
from occubench.faults._seeding import seeded_rng
from occubench.faults._semantic import SEMANTIC_FAULT_PROMPT, rewrite_observation
from occubench.faults._session import (
    FaultSession,
    FaultSettings,
    InjectedFault,
    make_fault_plan,
)

__all__ = [
    "PAPER_ERROR_BODIES",
    "FaultRules",
    "paper_fault_rules",
    "EXPLICIT_KINDS",
    "FAULT_TYPES",
    "IMPLICIT_KINDS",
    "SEMANTIC_FAULT_PROMPT",
    "Call",
    "Degradation",
    "EnvMode",
    "FaultEngine",
    "FaultEvent",
    "FaultFamily",
    "FaultKind",
    "FaultPlan",
    "FaultSession",
    "FaultSettings",
    "FaultType",
    "InjectedFault",
    "Injection",
    "PlacementContext",
    "Scope",
    "SimulatorAccess",
    "changed_paths",
    "degrade",
    "explicit_error",
    "fault_type",
    "make_fault_plan",
    "prompt_fault_rules",
    "register_fault_type",
    "rewrite_observation",
    "seeded_rng",
    "spread_starts",
]

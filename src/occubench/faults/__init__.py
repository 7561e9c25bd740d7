"""Fault injection: env modes, seeded fault plans, injectors."""

from occubench.faults._injectors import Degradation, degrade, explicit_error
from occubench.faults._kinds import EXPLICIT_KINDS, IMPLICIT_KINDS, FaultKind
from occubench.faults._modes import EnvMode, FaultEngine
from occubench.faults._plan import FaultEvent, FaultPlan, make_fault_plan
from occubench.faults._prompt_rules import prompt_fault_rules
from occubench.faults._session import FaultSession, FaultSettings, InjectedFault

__all__ = [
    "EXPLICIT_KINDS",
    "IMPLICIT_KINDS",
    "Degradation",
    "EnvMode",
    "FaultEngine",
    "FaultEvent",
    "FaultKind",
    "FaultPlan",
    "FaultSession",
    "FaultSettings",
    "InjectedFault",
    "degrade",
    "explicit_error",
    "make_fault_plan",
    "prompt_fault_rules",
]

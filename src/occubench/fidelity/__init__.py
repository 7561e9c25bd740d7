"""Simulator fidelity: the probe audit of simulators and cross-simulator agreement."""

from occubench.fidelity._agreement import (
    SimulatorComparison,
    SimulatorSpread,
    compare_simulators,
    comparison_tables,
    simulator_spreads,
)
from occubench.fidelity._audit import (
    AUDIT_TASK,
    NO_VERIFIER,
    AuditReport,
    EnvAudit,
    Flag,
    PartScore,
    SimulatorAudit,
    fidelity_score,
    part_scores,
    run_audit,
)
from occubench.fidelity._audit_eval import AuditGrade, AuditSample, AuditWorld, ProbeRun, audit_task
from occubench.fidelity._judge import RULE_JUDGE_SYSTEM_PROMPT, judge_rules, rule_request
from occubench.fidelity._metrics import FidelityCheck, FidelityMetric, trajectory_checks
from occubench.fidelity._probes import (
    Probe,
    ProbeKind,
    ProbeResult,
    ProbeTrajectory,
    TrajectoryResult,
    env_trajectories,
    generated_calls,
    plan_calls,
    unknown_value,
)
from occubench.fidelity._tables import audit_tables
from occubench.simchecks import id_values, is_error, is_id_key, is_read_tool, known_values

__all__ = [
    "AUDIT_TASK",
    "AuditGrade",
    "AuditSample",
    "AuditWorld",
    "ProbeRun",
    "RULE_JUDGE_SYSTEM_PROMPT",
    "AuditReport",
    "FidelityCheck",
    "EnvAudit",
    "Flag",
    "FidelityMetric",
    "PartScore",
    "Probe",
    "ProbeKind",
    "ProbeResult",
    "ProbeTrajectory",
    "SimulatorAudit",
    "SimulatorComparison",
    "SimulatorSpread",
    "TrajectoryResult",
    "audit_task",
    "audit_tables",
    "compare_simulators",
    "comparison_tables",
    "env_trajectories",
    "fidelity_score",
    "generated_calls",
    "id_values",
    "is_error",
    "is_id_key",
    "is_read_tool",
    "judge_rules",
    "known_values",
    "part_scores",
    "plan_calls",
    "rule_request",
    "run_audit",
    "simulator_spreads",
    "trajectory_checks",
    "unknown_value",
    "NO_VERIFIER",
]

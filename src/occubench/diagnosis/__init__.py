"""Why agents fail: failed trajectories classified by the verifier against a taxonomy."""

from occubench.diagnosis._failures import FailedTrajectory, TrajectoryStep, read_failures
from occubench.diagnosis._prompt import DIAGNOSIS_SYSTEM_PROMPT, diagnosis_request, render_steps
from occubench.diagnosis._report import (
    DIAGNOSE_TASK,
    ClassCounts,
    DiagnosisReport,
    DiagnosisRow,
    diagnosis_report,
    diagnosis_tables,
    read_diagnoses,
)
from occubench.diagnosis._run import Diagnosed, run_diagnosis
from occubench.diagnosis._task import DiagnosisError, diagnose, diagnosis_scorer, diagnosis_solver
from occubench.diagnosis._taxonomy import DEFINITIONS, FailureClass
from occubench.diagnosis._verdict import (
    ClassVote,
    Diagnosis,
    DiagnosisParseError,
    decide,
    parse_vote,
)

__all__ = [
    "DEFINITIONS",
    "DIAGNOSE_TASK",
    "DIAGNOSIS_SYSTEM_PROMPT",
    "ClassCounts",
    "ClassVote",
    "Diagnosis",
    "DiagnosisError",
    "DiagnosisParseError",
    "DiagnosisReport",
    "DiagnosisRow",
    "FailedTrajectory",
    "FailureClass",
    "TrajectoryStep",
    "decide",
    "diagnose",
    "diagnosis_report",
    "diagnosis_request",
    "diagnosis_scorer",
    "diagnosis_solver",
    "diagnosis_tables",
    "parse_vote",
    "read_diagnoses",
    "read_failures",
    "render_steps",
    "Diagnosed",
    "run_diagnosis",
]

"""Dataset layer: on-disk models, the release-layout loader and writer."""

from occubench.dataset._errors import DatasetError, DatasetIssue
from occubench.dataset._loader import (
    CONFIGS_DIR,
    SCENARIOS_FILE,
    TASKS_FILE,
    Dataset,
    load_dataset,
    write_dataset,
)
from occubench.dataset._models import (
    AnswerContainsCheck,
    AnswerExcludesCheck,
    CannedObservation,
    Check,
    EnvConfig,
    OrderCheck,
    PlanStep,
    ReferencePlan,
    Scenario,
    StateEqualsCheck,
    TaskRecord,
    ToolCalledCheck,
    ToolNotCalledCheck,
    ToolSpec,
)
from occubench.dataset._tool_schema import check_tool, tool_params

__all__ = [
    "CONFIGS_DIR",
    "SCENARIOS_FILE",
    "TASKS_FILE",
    "AnswerContainsCheck",
    "AnswerExcludesCheck",
    "CannedObservation",
    "Check",
    "Dataset",
    "DatasetError",
    "DatasetIssue",
    "EnvConfig",
    "OrderCheck",
    "PlanStep",
    "ReferencePlan",
    "Scenario",
    "StateEqualsCheck",
    "TaskRecord",
    "ToolCalledCheck",
    "ToolNotCalledCheck",
    "ToolSpec",
    "check_tool",
    "load_dataset",
    "tool_params",
    "write_dataset",
]

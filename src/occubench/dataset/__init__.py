"""Dataset layer: on-disk models, the release-layout loader and writer, the built-in suite."""

from occubench.dataset._errors import DatasetError, DatasetIssue
from occubench.dataset._loader import (
    CONFIGS_DIR,
    SCENARIOS_FILE,
    TASKS_FILE,
    Dataset,
    load_dataset,
    write_dataset,
)
from occubench.dataset._locate import REFERENCE_DATASET, reference_suite_dir, resolve_dataset_dir
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
from occubench.dataset._tool_schema import check_tool, example_arguments, example_value, tool_params

__all__ = [
    "CONFIGS_DIR",
    "REFERENCE_DATASET",
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
    "example_arguments",
    "example_value",
    "load_dataset",
    "reference_suite_dir",
    "resolve_dataset_dir",
    "tool_params",
    "write_dataset",
]

"""Every default of occubench in one place (``DEFAULT_*``)."""

from pathlib import Path

DEFAULT_DATASET_ENV = "OCCUBENCH_DATASET"
"""Environment variable naming the dataset folder used when none is given."""

DEFAULT_DATASET_DIR = Path("data")
"""Dataset folder used when neither an argument nor the environment variable names one."""

DEFAULT_ENV_MODE = "E0"
DEFAULT_FAULT_COUNT = 2
DEFAULT_FAULT_DURATION = 2
DEFAULT_FAULT_ENGINE = "code"
DEFAULT_SEED = 0

DEFAULT_MAX_TOOL_CALLS = 200
"""Tool calls an agent may make in one task before the sample ends."""

DEFAULT_MESSAGE_LIMIT = 1000
"""Safety net on messages per sample, above what DEFAULT_MAX_TOOL_CALLS needs."""

DEFAULT_SIMULATOR_RETRIES = 3
"""Re-asks of the simulator when its answer holds no JSON object."""

DEFAULT_VERIFIER_VOTES = 3
"""k: judge calls per sample; the majority decides, ties fail."""

DEFAULT_VERIFIER_RETRIES = 2
"""Re-asks of one judge vote whose output is not a verdict."""

DEFAULT_SAMPLE_RETRIES = 2
"""Inspect retries of a sample that errored (infrastructure), before it is recorded."""

DEFAULT_FAIL_ON_ERROR = 1.0
"""Share of errored samples that fails a run: 1.0 = never abort, record errors instead."""

DEFAULT_DATE = "2025-06-16"
"""Fixed date given to the agent and the simulator: no wall clock in prompts."""

DEFAULT_EXPECTED_TOOL_CALLS = 16
"""Calls a task is assumed to take when its plan does not say (fault spacing)."""

DEFAULT_MAX_CONNECTIONS = 32
"""Concurrent requests per model (agent, simulator, verifier each)."""

"""The run configuration (what a run computes) and the eval options (how it is run)."""

from occubench.config._eval_options import EvalOptions
from occubench.config._run import CONFIG_METADATA, NO_AGENT_MODEL, RunConfig, split_list

__all__ = ["CONFIG_METADATA", "NO_AGENT_MODEL", "EvalOptions", "RunConfig", "split_list"]

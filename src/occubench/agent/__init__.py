"""The agent under test: prompt, tool layer bound to the simulator, and the loop."""

from occubench.agent._arguments import (
    BadToolCall,
    CallProblem,
    LooseArguments,
    checked_arguments,
    loose_arguments,
    tool_schema,
)
from occubench.agent._environment import (
    conflicted_world,
    critical_calls,
    environment_simulator,
    expected_calls,
    open_environment,
    open_run_world,
    open_user,
    simulator_layout,
    simulator_prompt,
    use_run_world,
    user_model,
    user_turns,
    world_in_log,
    world_variant,
)
from occubench.agent._inspect_agent import (
    ToolCallLimitReached,
    as_answer,
    create_agent,
    inspect_agent,
    limited_tools,
)
from occubench.agent._loop import USER_TURN_METADATA, AgentLoop, raw_arguments, talk
from occubench.agent._prompt import (
    PLAN_MARKERS,
    agent_input,
    agent_system_prompt,
    paper_date,
    run_system_prompt,
)
from occubench.agent._solver import occubench_agent
from occubench.agent._state import Episode, StopReason, episode_fields, episode_in, read_episode
from occubench.agent._tool_budget import (
    AdmittedCall,
    CallRule,
    ToolBudget,
    refusal_error,
)
from occubench.agent._tool_layer import FaultHook, ToolLayer

__all__ = [
    "PLAN_MARKERS",
    "USER_TURN_METADATA",
    "open_user",
    "talk",
    "user_model",
    "user_turns",
    "AgentLoop",
    "paper_date",
    "raw_arguments",
    "AdmittedCall",
    "BadToolCall",
    "CallRule",
    "ToolBudget",
    "refusal_error",
    "CallProblem",
    "Episode",
    "FaultHook",
    "StopReason",
    "ToolCallLimitReached",
    "ToolLayer",
    "agent_input",
    "agent_system_prompt",
    "as_answer",
    "checked_arguments",
    "conflicted_world",
    "create_agent",
    "critical_calls",
    "environment_simulator",
    "episode_fields",
    "episode_in",
    "read_episode",
    "expected_calls",
    "inspect_agent",
    "limited_tools",
    "LooseArguments",
    "loose_arguments",
    "occubench_agent",
    "open_environment",
    "open_run_world",
    "use_run_world",
    "world_in_log",
    "world_variant",
    "run_system_prompt",
    "simulator_layout",
    "simulator_prompt",
    "tool_schema",
]

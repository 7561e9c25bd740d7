"""The agent under test: prompt, tool layer bound to the simulator, and the loop."""

from occubench.agent._prompt import agent_input, agent_system_prompt
from occubench.agent._solver import critical_calls, expected_calls, occubench_agent
from occubench.agent._state import Episode, StopReason, episode_in
from occubench.agent._tool_layer import FaultHook, ToolLayer

__all__ = [
    "Episode",
    "FaultHook",
    "StopReason",
    "ToolLayer",
    "agent_input",
    "agent_system_prompt",
    "critical_calls",
    "episode_in",
    "expected_calls",
    "occubench_agent",
]

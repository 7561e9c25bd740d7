"""The agent under test: prompt, tool layer bound to the simulator, and the loop."""

from occubench.agent._prompt import agent_input, agent_system_prompt
from occubench.agent._solver import SIMULATOR_ROLE, occubench_agent
from occubench.agent._state import Episode, StopReason
from occubench.agent._tool_layer import FaultHook, ToolLayer

__all__ = [
    "SIMULATOR_ROLE",
    "Episode",
    "FaultHook",
    "StopReason",
    "ToolLayer",
    "agent_input",
    "agent_system_prompt",
    "occubench_agent",
]

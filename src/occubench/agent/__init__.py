"""The agent under test: prompt, tool layer bound to the simulator, and the loop."""

from occubench.agent._loop import AgentLoop
from occubench.agent._prompt import PLAN_MARKERS, agent_input, agent_system_prompt, paper_date
from occubench.agent._solver import occubench_agent
from occubench.agent._state import Episode, StopReason, episode_in
from occubench.agent._tool_layer import FaultHook, ToolLayer

__all__ = [
    "PLAN_MARKERS",
    "AgentLoop",
    "paper_date",
    "Episode",
    "FaultHook",
    "StopReason",
    "ToolLayer",
    "agent_input",
    "agent_system_prompt",
    "episode_in",
    "occubench_agent",
]

"""The agent loop: the main model calls the env's tools until it answers."""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from occubench.agent._environment import open_environment
from occubench.agent._prompt import agent_system_prompt
from occubench.agent._state import Episode, StopReason
from occubench.config import RunConfig
from occubench.dataset import EnvConfig, TaskRecord
from occubench.roles import Role


@solver
def occubench_agent(config: RunConfig | None = None) -> Solver:
    """Run the agent under test in the sample's simulated environment.

    The sample's metadata carries its task record and env config. The agent gets a
    system prompt (scenario, fixed date) and the env's tools, and is called until it
    answers without a tool call or makes ``config.max_tool_calls`` calls. The
    configuration also gives the faults, the simulator's re-asks, the cache and the
    state mode (``history``: state implicit in the simulator's history; ``explicit``:
    JSON state changed by the simulator's patches, logged per step).
    """
    settings = config or RunConfig()
    max_tool_calls, date = settings.max_tool_calls, settings.date

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = TaskRecord.model_validate(state.metadata["task"])
        env = EnvConfig.model_validate(state.metadata["env"])
        model = get_model(role=Role.SIMULATOR.value, required=True)
        episode = state.store_as(Episode)
        layer = open_environment(settings, task, env, model, episode)
        state.messages.insert(
            0, ChatMessageSystem(content=agent_system_prompt(task.task_scenario_name, date))
        )
        state.tools = [t.as_tool() for t in layer.tools(env)]
        episode.stop_reason = StopReason.SAMPLE_LIMIT
        while True:
            state = await generate(state, tool_calls="single")
            if state.completed:
                break
            if not state.output.message.tool_calls:
                episode.stop_reason = StopReason.ANSWERED
                break
            if episode.tool_calls >= max_tool_calls:
                episode.stop_reason = StopReason.TOOL_CALL_LIMIT
                break
        return state

    return solve

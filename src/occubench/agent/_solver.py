"""The built-in agent solver: the sample's environment, then the protocol's agent loop."""

from __future__ import annotations

from inspect_ai.model import ChatMessageSystem, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from occubench.agent._environment import open_environment, open_user
from occubench.agent._loop import AgentLoop
from occubench.agent._prompt import run_system_prompt
from occubench.agent._state import Episode
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import EnvConfig, TaskRecord, tool_info
from occubench.roles import Role


@solver
def occubench_agent(run: ResolvedRun | None = None) -> Solver:
    """Run the agent under test in the sample's simulated environment.

    The sample's metadata carries its task record and env config. The agent gets a
    system prompt (scenario, fixed date) and the instruction in its protocol's style
    and the env's tools, and works until a stop rule of the protocol ends the loop
    (``AgentLoop``). The environment (simulator layout, faults, state mode, online
    simulator checks) is opened by ``open_environment``; a task with a ``user`` brief gets
    its simulated user (``open_user``), whom the agent's messages without a tool call
    reach. Without ``run``: the defaults.
    """
    chosen = run or ResolvedRun.of(RunConfig())
    points = chosen.points

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = TaskRecord.model_validate(state.metadata["task"])
        env = EnvConfig.model_validate(state.metadata["env"])
        episode = state.store_as(Episode)
        model = get_model(role=Role.SIMULATOR.value, required=True)
        user = open_user(chosen, task, env, epoch=state.epoch)  # before any call is made
        if user is not None:
            episode.user_turns = []
        layer = open_environment(chosen, task, env, model, episode, epoch=state.epoch)
        system = run_system_prompt(chosen, task.task_scenario_name)
        state.messages.insert(0, ChatMessageSystem(content=system))
        tools = [
            tool_info(spec, fill=points.validate_tool_args) for spec in env.action_set_definitions
        ]
        state.tools = [t.as_tool() for t in layer.tools(env)]
        loop = AgentLoop(
            get_model(), tools, env.action_set_definitions, layer, episode, points, user
        )
        return await loop.run(state)

    return solve

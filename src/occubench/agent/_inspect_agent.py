"""Any Inspect agent as the agent under test, with the env's tools and the fault layer.

``--agent react`` (or ``module:function``) puts an Inspect agent in place of the
built-in loop. The sample's environment is opened as for the built-in loop
(``open_environment``), the agent is created per sample with the env's tools
(``tools=...``) and the run's ``agent_args``, and it drives the main model. Its tool calls
pass the same tool layer, so faults are injected and logged as for the built-in loop.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from inspect_ai.agent import Agent, AgentState
from inspect_ai.model import ChatMessageSystem, ModelOutput, get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolDef
from inspect_ai.util import registry_create

from occubench.agent._environment import open_environment, open_user
from occubench.agent._loop import talk
from occubench.agent._prompt import run_system_prompt
from occubench.agent._state import Episode, StopReason
from occubench.agent._tool_budget import CallRule, ToolBudget
from occubench.agent._tool_layer import ToolLayer
from occubench.config import ResolvedRun
from occubench.dataset import EnvConfig, TaskRecord
from occubench.errors import UsageError
from occubench.roles import Role


class ToolCallLimitReached(RuntimeError):
    """The agent asked for a tool call past ``max_tool_calls``: the episode ends there.

    Raised from the tool, it is not one of the errors Inspect turns into a tool result
    (a limit error would be: the agent would be told and go on), so it ends the agent's
    run and the solver records the stop reason.
    """

    def __init__(self, budget: ToolBudget) -> None:
        super().__init__(budget.refusal())


def create_agent(name: str, tools: Sequence[ToolDef], arguments: dict[str, Any]) -> Agent:
    """An Inspect agent by registry name (``react``) or ``module:function``, given the tools.

    Raises:
        UsageError: the agent cannot be found, or does not take ``tools`` and the
            arguments given.
    """
    factory: Any
    try:
        if ":" in name:
            module, _, function = name.partition(":")
            factory = getattr(importlib.import_module(module), function)
        else:
            factory = None
    except (ImportError, AttributeError) as e:
        raise UsageError(f"agent {name!r} not found: {e}") from None
    try:
        if factory is not None:
            return factory(tools=list(tools), **arguments)  # type: ignore[no-any-return]
        return registry_create("agent", name, tools=list(tools), **arguments)
    except LookupError as e:
        raise UsageError(f"agent {name!r} is not in Inspect's registry: {e}") from None
    except TypeError as e:
        raise UsageError(
            f"agent {name!r} must accept tools=... and the agent_args given: {e}"
        ) from None


def limited_tools(layer: ToolLayer, env: EnvConfig, budget: ToolBudget) -> list[ToolDef]:
    """The env's tools bound to ``layer``; a call past ``budget`` raises ToolCallLimitReached.

    The tools' arguments are checked by Inspect's tool loop against their schema, whatever
    the protocol (an Inspect agent cannot pass the raw argument string on).
    """

    def guard(inner: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
        async def guarded(**arguments: Any) -> Any:
            if budget.spent(layer.episode.tool_calls):
                raise ToolCallLimitReached(budget)
            return await inner(**arguments)

        return guarded

    return [
        ToolDef(
            guard(tool.tool),
            name=tool.name,
            description=tool.description,
            parameters=tool.parameters,
            max_output=0,
        )
        for tool in layer.tools(env)
    ]


def as_answer(output: ModelOutput) -> ModelOutput:
    """The agent's output as a final answer: its completion, with no tool call attached.

    Agents that finish with a submit tool (Inspect's ``react``) leave the submitted
    answer in ``output.completion`` on a message that still carries the tool call; the
    scorer reads the final answer from a message without tool calls.
    """
    message = output.message if output.choices else None
    if message is None or not message.tool_calls:
        return output
    answered = ModelOutput.from_content(model=output.model, content=output.completion)
    answered.usage = output.usage
    return answered


@solver
def inspect_agent(run: ResolvedRun) -> Solver:
    """Run the Inspect agent ``run.config.agent`` in the sample's simulated environment.

    It gets the built-in loop's system prompt (scenario, fixed date) and instruction, the
    env's tools through the tool layer (faults applied and logged), and at most the
    protocol's ``max_tool_calls`` tool calls. On a task with a user, each time the agent
    finishes, its answer goes to the user, and the agent runs again on the user's reply
    until the user ends the conversation or its turn budget is spent.
    """
    if not run.config.agent:
        raise ValueError("inspect_agent needs config.agent")
    name, arguments = run.config.agent, dict(run.config.agent_args)
    budget = CallRule.of(run.points).budget

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        task = TaskRecord.model_validate(state.metadata["task"])
        env = EnvConfig.model_validate(state.metadata["env"])
        episode = state.store_as(Episode)
        simulator = get_model(role=Role.SIMULATOR.value, required=True)
        user = open_user(run, task, env, epoch=state.epoch)
        if user is not None:
            episode.user_turns = []
        layer = open_environment(run, task, env, simulator, episode, epoch=state.epoch)
        system = run_system_prompt(run, task.task_scenario_name)
        state.messages.insert(0, ChatMessageSystem(content=system))
        agent = create_agent(name, limited_tools(layer, env, budget), arguments)
        agent_state = AgentState(messages=state.messages)
        episode.stop_reason = StopReason.SAMPLE_LIMIT
        try:
            agent_state = await agent(agent_state)
            episode.stop_reason = StopReason.ANSWERED
            while user is not None:  # each answer goes to the user; the agent runs on
                said = as_answer(agent_state.output).completion if agent_state.output else ""
                ended = await talk(user, said, agent_state.messages, episode)
                if ended is not None:
                    episode.stop_reason = ended
                    break
                agent_state = await agent(agent_state)
        except ToolCallLimitReached:
            episode.stop_reason = StopReason.TOOL_CALL_LIMIT
        finally:
            state.messages = agent_state.messages
            if agent_state.output:
                state.output = as_answer(agent_state.output)
        return state

    return solve

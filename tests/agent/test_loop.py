"""The agent loop: its tool-call budget holds inside one assistant message; a call the
spending limit refused errors the sample."""

from __future__ import annotations

from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall

from conftest import SCRIPTED_ROLES, make_dataset, run_task, tool
from occubench.agent import episode_in
from occubench.errors import BudgetExhausted, ErrorSource, error_source
from occubench.providers import PROVIDER_PACKAGES
from occubench.scripted import BEHAVIOURS
from occubench.scripted._provider import to_output


def many_calls_agent(calls: int):
    """An agent that asks for ``calls`` tool calls in its first message, then answers."""

    def agent(input, tools, tool_choice, config):
        if any(isinstance(m, ChatMessageTool) for m in input):
            output = ModelOutput.from_content("mockllm/model", "Done.")
        else:
            message = ChatMessageAssistant(
                content="",
                tool_calls=[
                    ToolCall(id=f"c{i}", function="get_record", arguments={"id": f"A-{i}"})
                    for i in range(calls)
                ],
            )
            output = ModelOutput.from_message(message, stop_reason="tool_calls")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output

    return get_model("mockllm/model", custom_outputs=agent, memoize=False)


def counting_simulator(asked: list[str]):
    """The echo simulator, counting the actions it is asked."""

    def simulate(input, tools, tool_choice, config):
        asked.append(input[-1].text)
        return to_output("mockllm/model", BEHAVIOURS["echo-simulator"](input, tools), input)

    return get_model("mockllm/model", custom_outputs=simulate, memoize=False)


def test_thirty_calls_in_one_message_under_a_cap_of_five(tmp_path):
    dataset = make_dataset(tmp_path / "dataset", [tool("get_record", id="The record id.")])
    asked: list[str] = []
    roles = {"simulator": counting_simulator(asked), "verifier": SCRIPTED_ROLES["verifier"]}
    log = run_task(
        tmp_path / "logs",
        agent=many_calls_agent(30),
        roles=roles,
        dataset=str(dataset),
        protocol="occubench",
        max_tool_calls=5,
    )
    (sample,) = log.samples
    assert sample.error is None
    assert len(asked) == 5 and [f'"A-{i}"' in a for i, a in enumerate(asked)] == [True] * 5
    episode = episode_in(sample.store)
    assert episode.tool_calls == 5 and len(episode.steps) == 5
    results = [m for m in sample.messages if isinstance(m, ChatMessageTool)]
    assert len(results) == 30  # every call answered: 5 observations, then 25 errors
    assert all(m.error is None for m in results[:5])
    assert all(m.error is not None and m.error.type == "limit" for m in results[5:])
    assert results[5].error.message.startswith("tool call limit of 5 reached: this call was not")
    assert episode.stop_reason == "tool_call_limit"


def test_a_call_the_budget_refused_errors_the_sample_even_under_the_paper_rule(tmp_path):
    """The paper ends the loop on an agent API failure and grades it; a refusal is no failure."""

    def refused(input, tools, tool_choice, config):
        raise BudgetExhausted("call not made: the budget is spent")

    agent = get_model("mockllm/model", custom_outputs=refused, memoize=False)
    log = run_task(tmp_path / "logs", agent=agent, protocol="paper")
    (sample,) = log.samples[:1]
    assert (
        sample.error is not None
        and error_source(sample.error.traceback, PROVIDER_PACKAGES) is ErrorSource.BUDGET
    )
    assert not sample.scores and episode_in(sample.store).stop_reason != "agent_error"

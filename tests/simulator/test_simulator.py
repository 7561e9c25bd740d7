import asyncio

import pytest
from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, get_model

from occubench.simulator import Simulator, SimulatorError


class Recorder:
    """A mockllm callable that records prompts and answers from a list."""

    def __init__(self, answers):
        self.answers = list(answers)
        self.prompts = []

    def __call__(self, input, tools, tool_choice, config):
        from inspect_ai.model import ModelOutput, ModelUsage

        self.prompts.append(list(input))
        out = ModelOutput.from_content("mockllm/model", self.answers.pop(0))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out


def run(coro):
    return asyncio.run(coro)


def test_history_is_prefix_stable():
    rec = Recorder(['<observation>{"n": 1}</observation>', '{"n": 2}', '```json\n{"n": 3}\n```'])
    sim = Simulator(get_model("mockllm/model", custom_outputs=rec), "SYSTEM")
    for i in range(3):
        assert run(sim.observe("count", {"i": i})).value == {"n": i + 1}
    p1, p2, p3 = rec.prompts
    assert isinstance(p1[0], ChatMessageSystem) and p1[0].text == "SYSTEM"
    for shorter, longer in ((p1, p2), (p2, p3)):
        assert [m.text for m in longer[: len(shorter)]] == [m.text for m in shorter]
    assert isinstance(p3[2], ChatMessageAssistant) and '"n": 1' in p3[2].text
    assert [s.tool for s in sim.steps] == ["count"] * 3


def test_reask_then_success_keeps_history_clean():
    rec = Recorder(["sorry, cannot", '{"ok": true}', '{"next": 1}'])
    sim = Simulator(get_model("mockllm/model", custom_outputs=rec), "S", max_retries=2)
    assert run(sim.observe("a", {})).value == {"ok": True}
    assert len(rec.prompts[1]) == 4  # system, action, bad reply, re-ask
    assert sim.steps[0].attempts == 2
    run(sim.observe("b", {}))
    assert len(rec.prompts[2]) == 4  # system, action a, observation a, action b: no re-ask trace


def test_gives_up_with_infrastructure_error():
    rec = Recorder(["nope"] * 3)
    sim = Simulator(get_model("mockllm/model", custom_outputs=rec), "S", max_retries=2)
    with pytest.raises(SimulatorError, match="after 3 attempts"):
        run(sim.observe("a", {}))
    assert sim.steps == []


def test_failure_is_recorded_without_a_call():
    rec = Recorder(['{"after": 1}'])
    sim = Simulator(get_model("mockllm/model", custom_outputs=rec), "S")
    sim.record_failure("a", {"x": 1}, {"error": {"status": 500}})
    run(sim.observe("a", {"x": 1}))
    assert len(rec.prompts) == 1
    assert '"harness_note": "failed"' in rec.prompts[0][2].text

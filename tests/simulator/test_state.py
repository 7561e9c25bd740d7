import asyncio
import json

import pytest
from inspect_ai.model import ModelOutput, ModelUsage, get_model

from conftest import run_task
from occubench.agent import episode_in
from occubench.simulator import PatchError, Simulator, SimulatorError, apply_reply_patch

STATE = {"orders": [{"id": "A1", "status": "open"}], "count": 1}


def test_patch_applies_without_touching_the_input():
    patch, new = apply_reply_patch(
        '<observation>{}</observation><state_patch>[{"op": "replace", "path": '
        '"/orders/0/status", "value": "shipped"}, {"op": "add", "path": "/count", "value": 2}]'
        "</state_patch>",
        STATE,
    )
    assert new["orders"][0]["status"] == "shipped" and new["count"] == 2
    assert STATE["orders"][0]["status"] == "open" and len(patch) == 2


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("<observation>{}</observation>", "no <state_patch>"),
        ("<state_patch>not json</state_patch>", "not JSON"),
        ('<state_patch>{"op": "add"}</state_patch>', "list of operations"),
        (
            '<state_patch>[{"op": "replace", "path": "/nope/0", "value": 1}]</state_patch>',
            "does not apply",
        ),
        (
            '<state_patch>[{"op": "test", "path": "/count", "value": 5}]</state_patch>',
            "does not apply",
        ),
        ('<state_patch>[{"op": "replace", "path": "", "value": [1]}]</state_patch>', "JSON object"),
    ],
)
def test_bad_patches_are_rejected(reply, reason):
    with pytest.raises(PatchError, match=reason):
        apply_reply_patch(reply, STATE)


def scripted(answers):
    prompts = []

    def fn(input, tools, tool_choice, config):
        prompts.append([m.text for m in input])
        out = ModelOutput.from_content("mockllm/model", answers.pop(0))
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    return get_model("mockllm/model", custom_outputs=fn), prompts


def test_bad_patch_is_reasked_then_state_advances():
    model, prompts = scripted(
        [
            '<observation>{"ok": 1}</observation>'
            '<state_patch>[{"op": "remove", "path": "/x"}]</state_patch>',
            '<observation>{"ok": 1}</observation>'
            '<state_patch>[{"op": "add", "path": "/x", "value": 1}]</state_patch>',
            '<observation>{"ok": 2}</observation><state_patch>[]</state_patch>',
        ]
    )
    sim = Simulator(model, "S", state={"y": 0})
    assert asyncio.run(sim.observe("set", {})).value == {"ok": 1}
    assert "state patch was rejected" in prompts[1][-1]
    assert json.loads(prompts[0][-1])["current_state"] == {"y": 0}
    asyncio.run(sim.observe("get", {}))
    assert json.loads(prompts[2][-1])["current_state"] == {"y": 0, "x": 1}
    assert prompts[2][:3] == [prompts[0][0], '{"name": "set", "arguments": {}}', prompts[2][2]]
    assert [s.state for s in sim.steps] == [{"y": 0, "x": 1}, {"y": 0, "x": 1}]


def test_patch_that_never_applies_is_an_infrastructure_error():
    model, _ = scripted(["<observation>{}</observation>"] * 2)
    sim = Simulator(model, "S", state={}, max_retries=1)
    with pytest.raises(SimulatorError, match="no <state_patch>"):
        asyncio.run(sim.observe("a", {}))


def test_explicit_run_logs_the_state_after_every_step(tmp_path):
    log = run_task(tmp_path, task_ids="26", state_mode="explicit")
    sample = log.samples[0]
    episode = episode_in(sample.store)
    steps = episode.steps
    assert steps and all(s.state is not None and s.patch is not None for s in steps)
    assert [s.state["last_action"] for s in steps if s.state] == [s.tool for s in steps]
    assert episode.state is not None and episode.state["last_action"] == steps[-1].tool
    assert log.eval.metadata["config"]["state_mode"] == "explicit"


def test_state_checks_need_explicit_mode(release_copy, tmp_path):
    from occubench.dataset import TASKS_FILE

    path = release_copy / TASKS_FILE
    records = [json.loads(line) for line in path.read_text().splitlines()]
    record = next(r for r in records if r["task_id"] == 26)
    record["checks"] = [{"kind": "state_equals", "path": "/last_action", "value": "ANY"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with pytest.raises(ValueError, match="state_mode=explicit"):
        run_task(tmp_path, dataset=str(release_copy), task_ids="26")
    sample = run_task(
        tmp_path,
        dataset=str(release_copy),
        task_ids="26",
        state_mode="explicit",
        roles={"simulator": "occubench/echo-simulator"},
    ).samples[0]
    (check,) = sample.scores["occubench_scorer"].metadata["checks"]
    assert check["passed"] is False and "state at /last_action is" in check["detail"]


def doubling_patch(times: int) -> str:
    """Each operation copies /a into a child of /a: the state doubles with every one."""
    ops = [{"op": "copy", "from": "/a", "path": f"/a/{i}"} for i in range(times)]
    return f"<state_patch>{json.dumps(ops)}</state_patch>"


def test_a_small_patch_cannot_grow_the_state_past_the_limit():
    state = {"a": {"note": "x" * 1500}}
    reply = doubling_patch(12)
    assert len(reply) < 600  # the patch itself: under 600 characters
    _, grown = apply_reply_patch(reply, state, max_size=10**8)  # the limit aside: 4096-fold
    assert len(json.dumps(grown)) > 4000 * len(json.dumps(state))
    with pytest.raises(PatchError, match="grow the state past 1000000 characters"):
        apply_reply_patch(reply, state)
    assert state == {"a": {"note": "x" * 1500}}  # untouched
    with pytest.raises(PatchError, match="grow the state past"):  # refused before it runs
        apply_reply_patch(doubling_patch(60), state)  # 2**60-fold would never fit in memory


def test_a_growing_patch_is_reasked_like_one_that_does_not_apply():
    model, prompts = scripted(
        [
            "<observation>{}</observation>" + doubling_patch(12),
            '<observation>{}</observation><state_patch>[{"op": "add", "path": "/b", "value": 1}]'
            "</state_patch>",
        ]
    )
    sim = Simulator(model, "S", state={"a": {"note": "x" * 1500}}, max_retries=1)
    asyncio.run(sim.observe("grow", {}))
    assert "grow the state past" in prompts[1][-1] and sim.steps[0].attempts == 2
    assert sim.state == {"a": {"note": "x" * 1500}, "b": 1}

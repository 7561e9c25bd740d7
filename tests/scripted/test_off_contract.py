"""The scripted simulators that leave the tools' contract: off-schema and drifting."""

import json

from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from occubench.dataset import load_dataset, reference_suite_dir
from occubench.scripted._flawed import DRIFT_AFTER, drifting_simulator, off_schema_simulator
from occubench.simulator import parse_observation, render_system_prompt


def conversation(prompt, actions):
    asked = [ChatMessageUser(content=json.dumps({"name": n, "arguments": a})) for n, a in actions]
    return [ChatMessageSystem(content=prompt), *asked]


def test_off_schema_answers_every_action_with_one_generic_envelope():
    ds = load_dataset(reference_suite_dir(), task_ids=[1001])
    prompt = render_system_prompt(ds.env(ds.tasks[0]), date="2025-06-16")
    reply = off_schema_simulator(conversation(prompt, [("any_tool", {"x": "1"})]), [])
    assert parse_observation(reply.content) == {
        "status": "success",
        "tool": "any_tool",
        "result": {"x": "1"},
    }


def test_drifting_is_canned_at_first_then_wraps_its_answers():
    ds = load_dataset(reference_suite_dir(), task_ids=[1001])
    env = ds.env(ds.tasks[0])
    prompt = render_system_prompt(env, date="2025-06-16")
    known = env.canned_observations[0]
    actions = [(known.tool, known.arguments)]
    for count in range(1, DRIFT_AFTER + 2):
        reply = drifting_simulator(conversation(prompt, actions * count), [])
        observation = parse_observation(reply.content)
        if count <= DRIFT_AFTER:
            assert observation == known.observation
        else:
            assert observation == {"status": "success", "data": known.observation}
    unknown = conversation(prompt, actions * DRIFT_AFTER + [(known.tool, {"x": "none"})])
    assert "error" in parse_observation(drifting_simulator(unknown, []).content)  # unwrapped

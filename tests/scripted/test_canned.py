import json

from inspect_ai.model import ChatMessageSystem, ChatMessageUser

from occubench.dataset import load_dataset, reference_suite_dir
from occubench.scripted._canned import canned_simulator
from occubench.simulator import parse_observation, render_system_prompt


def ask(prompt, name, arguments):
    action = json.dumps({"name": name, "arguments": arguments})
    reply = canned_simulator(
        [ChatMessageSystem(content=prompt), ChatMessageUser(content=action)], []
    )
    return parse_observation(reply.content)


def test_reference_suite_loads_one_task_per_industry():
    ds = load_dataset(reference_suite_dir())
    assert len(ds.tasks) == 10 and len({ds.industry(t) for t in ds.tasks}) == 10
    for task in ds.tasks:
        assert task.reference_plan and task.checks and task.solution_plan
        env = ds.env(task)
        assert len(env.canned_observations) == len(task.reference_plan.steps)


def test_canned_answers_exact_calls_and_errors_otherwise():
    ds = load_dataset(reference_suite_dir(), task_ids=[1001])
    env = ds.env(ds.tasks[0])
    prompt = render_system_prompt(env, date="2025-06-16")
    known = env.canned_observations[0]
    assert ask(prompt, known.tool, known.arguments) == known.observation
    assert ask(prompt, known.tool, {"patient_id": "P-0000"})["error"]["code"] == "NOT_FOUND"

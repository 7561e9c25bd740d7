"""The twin simulators (``occubench/twin``, ``occubench/forgetful``) asked as a run asks them."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import anyio
import jsonpatch
import pytest
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, get_model

from occubench.dataset import EnvConfig, load_dataset, reference_suite_dir
from occubench.errors import UsageError
from occubench.faults import SEMANTIC_FAULT_PROMPT
from occubench.protocols import MessageStyle
from occubench.scripted import FORGET_WRITE, check_twin_run
from occubench.scripted._canned import semantic_variant
from occubench.scripted._twin_sim import changes_patch, prompt_state, prompt_tools
from occubench.simulator import (
    LAYOUTS,
    STATE_CONTRACT,
    Simulator,
    SimulatorError,
    apply_reply_patch,
)
from occubench.twins import state_changes, twin_for

DATE = "2025-06-16"
SHELF = "shelf_inventory"
SHELF_TWIN = """
from occubench.twins import Answer, Twin, tool


class ShelfTwin(Twin):
    environment = "shelf_inventory"

    @tool
    def add_item(self, arguments):
        self.state["items"].append(arguments["name"])
        return Answer(observation={"added": arguments["name"], "count": len(self.state["items"])})

    @tool
    def remove_item(self, arguments):
        if arguments["name"] not in self.state["items"]:
            return self.error(f"no item {arguments['name']}", code="NOT_FOUND")
        self.state["items"].remove(arguments["name"])
        return Answer(observation={"removed": arguments["name"]})

    @tool
    def list_items(self, arguments):
        return Answer(observation={"items": list(self.state["items"])})
"""


def shelf_env() -> EnvConfig:
    """A small env with writes, whose twin lives in a user's folder (``shelf_folder``)."""
    named = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    return EnvConfig(
        environment_name=SHELF,
        world_model_system_prompt="You simulate a shelf of items.",
        action_set_definitions=[
            {"name": "add_item", "description": "Add.", "parameters": named},
            {"name": "remove_item", "description": "Remove.", "parameters": named},
            {"name": "list_items", "description": "List.", "parameters": {"type": "object"}},
        ],
        task_initial_state={"items": ["bolt"]},
        state_description={"items": "the items on the shelf, in order"},
    )


def shelf_folder(root: Path) -> Path:
    folder = root / "twins"
    folder.mkdir()
    (folder / "shelf.py").write_text(SHELF_TWIN)
    return folder


def triage_env() -> EnvConfig:
    ds = load_dataset(reference_suite_dir(), task_ids=[1001])
    return ds.env(ds.tasks[0])


def simulator(
    model: str, env: EnvConfig, style: MessageStyle, *, explicit: bool = False, **args: Any
) -> Simulator:
    layout = LAYOUTS[style]()
    prompt = layout.system_prompt(env, date=DATE, rules=STATE_CONTRACT if explicit else "")
    state = copy.deepcopy(env.task_initial_state) if explicit else None
    return Simulator(get_model(model, memoize=False, **args), prompt, layout=layout, state=state)


def observe(sim: Simulator, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    async def run() -> list[Any]:
        return [(await sim.observe(tool, arguments)).value for tool, arguments in calls]

    return anyio.run(run)


TRIAGE_CALLS = [
    ("get_patient_vitals", {"patient_id": "P-2231"}),
    ("get_patient_vitals", {"patient_id": "P-0000"}),
    ("list_open_beds", {"unit": "ED-North"}),
    ("get_triage_protocol", {"esi_level": 2}),
]


@pytest.mark.parametrize("style", list(MessageStyle))
@pytest.mark.parametrize("explicit", [False, True])
def test_the_twin_simulator_answers_what_the_twin_answers(style, explicit):
    env = triage_env()
    twin = twin_for(env)
    assert twin is not None
    expected = [step.observation for step in twin.run(TRIAGE_CALLS)]
    sim = simulator("occubench/twin", env, style, explicit=explicit)
    assert observe(sim, TRIAGE_CALLS) == expected
    assert expected[1]["error"]["code"] == "NOT_FOUND"  # not every answer is the same one
    if explicit:  # read-only tools: the patch of every step is empty
        assert [s.patch for s in sim.steps] == [[], [], [], []]


def test_an_env_the_prompt_names_no_twin_for_is_an_error_naming_its_tools():
    sim = simulator("occubench/twin", shelf_env(), MessageStyle.OCCUBENCH)
    with pytest.raises(SimulatorError, match="no twin .* add_item, list_items, remove_item"):
        observe(sim, [("list_items", {})])


@pytest.mark.parametrize("style", list(MessageStyle))
def test_a_named_folder_of_twins_answers_and_writes_persist_in_the_history(tmp_path, style):
    sim = simulator("occubench/twin", shelf_env(), style, twins=str(shelf_folder(tmp_path)))
    calls = [("add_item", {"name": "nut"}), ("remove_item", {"name": "bolt"})]
    calls += [("remove_item", {"name": "bolt"}), ("list_items", {})]
    answers = observe(sim, calls)
    assert answers[0] == {"added": "nut", "count": 2}
    assert answers[2] == {"error": "no item bolt", "code": "NOT_FOUND"}
    assert answers[3] == {"items": ["nut"]}


def test_a_call_an_injected_fault_failed_changed_nothing(tmp_path):
    sim = simulator(
        "occubench/twin", shelf_env(), MessageStyle.OCCUBENCH, twins=str(shelf_folder(tmp_path))
    )
    sim.record_failure("add_item", {"name": "nut"}, {"error": "timeout"})
    assert observe(sim, [("list_items", {})]) == [{"items": ["bolt"]}]


def test_no_folder_of_twins_is_read_unless_named(tmp_path):
    folder = shelf_folder(tmp_path)
    marker = tmp_path / "imported"
    (folder / "loud.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    sim = simulator("occubench/twin", triage_env(), MessageStyle.OCCUBENCH)
    observe(sim, TRIAGE_CALLS[:1])
    assert not marker.exists()
    simulator("occubench/twin", shelf_env(), MessageStyle.OCCUBENCH, twins=str(folder))
    assert marker.exists()


@pytest.mark.parametrize("explicit", [False, True])
def test_forgetful_forgets_its_second_write_while_its_answer_looks_right(tmp_path, explicit):
    assert FORGET_WRITE == 2
    folder = str(shelf_folder(tmp_path))
    calls = [("add_item", {"name": n}) for n in ("nut", "washer", "screw")] + [("list_items", {})]
    twin = simulator("occubench/twin", shelf_env(), MessageStyle.OCCUBENCH, twins=folder)
    forgetful = simulator(
        "occubench/forgetful", shelf_env(), MessageStyle.OCCUBENCH, explicit=explicit, twins=folder
    )
    right, drifted = observe(twin, calls), observe(forgetful, calls)
    assert drifted[1] == right[1] == {"added": "washer", "count": 3}  # looks right
    assert right[3] == {"items": ["bolt", "nut", "washer", "screw"]}
    assert drifted[3] == {"items": ["bolt", "nut", "screw"]}  # the write is gone
    if explicit:
        assert forgetful.steps[1].patch == []
        assert forgetful.state == {"items": ["bolt", "nut", "screw"]}


def test_a_semantic_fault_request_gets_the_deterministic_variant():
    observation = {"patient_id": "P-2231", "heart_rate": 128}
    messages = [
        ChatMessageSystem(content=SEMANTIC_FAULT_PROMPT),
        ChatMessageUser(content=json.dumps({"observation": observation})),
    ]
    model = get_model("occubench/twin", memoize=False)
    reply = anyio.run(lambda: model.generate(messages))
    assert (
        reply.completion
        == f"<observation>{json.dumps(semantic_variant(observation))}</observation>"
    )


def test_the_prompt_gives_the_twin_its_tools_and_state_in_either_layout():
    env = triage_env()
    for style in MessageStyle:
        prompt = LAYOUTS[style]().system_prompt(env, date=DATE, rules="")
        assert prompt_state(prompt) == env.task_initial_state
        assert sorted(t["name"] for t in prompt_tools(prompt)) == sorted(
            t.name for t in env.action_set_definitions
        )
    release = '{{initial_state}}: {{"a": {{"b": [1, 2]}}}}\n{action_set_definitions}: {"t": {}}'
    assert prompt_state(release) == {"a": {"b": [1, 2]}}
    assert prompt_tools(release) == [{"name": "t"}]


@pytest.mark.parametrize(
    "after",
    [
        {"items": ["a"], "n": {"x": 2}},
        {"items": [], "n": {}},
        {"items": ["a", "b", "c", "d"], "n": {"x": 1, "y": [1]}, "new": True},
    ],
)
def test_the_state_patch_makes_the_twins_changes(after):
    before = {"items": ["a", "b", "c"], "n": {"x": 1}}
    patch = changes_patch(state_changes(before, after))
    assert jsonpatch.apply_patch(before, patch) == after
    reply = f"<observation>{{}}</observation><state_patch>{json.dumps(patch)}</state_patch>"
    assert apply_reply_patch(reply, before).state == after


def test_a_run_the_twin_cannot_answer_is_refused_up_front(tmp_path):
    envs = [triage_env()]
    check_twin_run("occubench/twin", None, envs, simulator_places_faults=False)
    with pytest.raises(UsageError, match="follows no fault rule"):
        check_twin_run("occubench/twin", None, envs, simulator_places_faults=True)
    with pytest.raises(UsageError, match=f"no twin in the package for the environment.s. {SHELF}"):
        check_twin_run("occubench/forgetful", None, [shelf_env()], simulator_places_faults=False)
    folder = shelf_folder(tmp_path)
    check_twin_run("occubench/twin", folder, [shelf_env()], simulator_places_faults=False)
    with pytest.raises(UsageError, match="--twins is read by the twin simulators"):
        check_twin_run("occubench/canned", folder, envs, simulator_places_faults=False)
    check_twin_run("occubench/canned", None, envs, simulator_places_faults=True)

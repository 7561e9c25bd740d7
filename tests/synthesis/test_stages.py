"""The stages one by one: prompts, JSON generation with re-asks, validation, repair, selection."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from inspect_ai.model import get_model

from occubench.costs import ModelPrice, PriceTable
from occubench.dataset import EnvConfig, StateEqualsCheck
from occubench.scripted._synthesis_world import ScriptedGenerator, scripted_env, scripted_tasks
from occubench.simulator import render_system_prompt
from occubench.synthesis import (
    ArtifactStore,
    Diagnosis,
    LevelRate,
    ScenarioPlan,
    StageResult,
    TaskDraft,
    TokenUsage,
    load_catalog,
    parse_reply,
    plan_scenario,
    pool_levels,
    render_prompt,
    repair_instance,
    select_difficulty,
    validate_env,
    validate_task,
)
from occubench.synthesis._generate import ReplyError
from occubench.synthesis._manifest import role_costs
from occubench.synthesis._prompts import PROMPT_NAMES, prompt_template
from occubench.synthesis._subtopics import Subtopic
from synthesis.world import mock

SCENARIO = load_catalog().select(names=["Emergency Department Triage"])[0]


def good_env(profile: str = "good") -> EnvConfig:
    return EnvConfig.model_validate(scripted_env("Triage Nurse", "Beds", profile))


def good_task(level: int = 2) -> TaskDraft:
    return TaskDraft.model_validate(scripted_tasks("Beds", "good")[level - 1])


def replay_generator(*replies: str):
    """A generator answering with ``replies`` in turn; the calls are recorded."""
    calls: list = []
    queue = list(replies)

    def outputs(messages, tools, tool_choice, config):
        from occubench.scripted._provider import to_output
        from occubench.scripted._reply import Reply

        calls.append(list(messages))
        return to_output("mockllm/model", Reply(content=queue.pop(0)), messages)

    return mock(outputs), calls


# --- prompts ----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", PROMPT_NAMES)
def test_prompt_files_fill_and_say_what_to_output(name: str) -> None:
    variables = {m.group(1) for m in re.finditer(r"\$(\w+)", prompt_template(name).template)}
    text = render_prompt(name, **{v: f"<<{v}>>" for v in variables})
    assert "$" not in text.replace("$$", "")
    if name.startswith(("sub", "env", "tasks", "repair")):
        assert text.startswith("# Stage: ")
        assert "## Output schema" in text and "<json>" in text
        schema = re.search(r"<json>\n(.*?)\n</json>", text, re.DOTALL).group(1)
        json.loads(schema)  # the schema shown is itself valid JSON
    if variables:
        with pytest.raises(KeyError):
            render_prompt(name)  # every variable must be given


# --- generate_json ----------------------------------------------------------------------------


PLAN = {
    "subtopics": [{"title": "Bed board", "summary": "Beds."}],
    "reference": {
        "terminology": [],
        "workflow": [],
        "state_variables": [],
        "edge_cases": [],
        "constraints": [],
    },
}


@pytest.mark.parametrize(
    "reply",
    [
        "<json>\n" + json.dumps(PLAN) + "\n</json>",
        "Here it is:\n```json\n" + json.dumps(PLAN) + "\n```\nDone.",
        json.dumps(PLAN),
        "Sure! " + json.dumps(PLAN) + " Hope this helps.",
    ],
)
def test_parse_reply_finds_the_object(reply: str) -> None:
    assert parse_reply(reply, ScenarioPlan).subtopics[0].title == "Bed board"


def test_parse_reply_names_the_problems() -> None:
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_reply("I cannot do that.", ScenarioPlan)
    cut_off = json.dumps(PLAN)[:60]  # its first inner object is whole, the reply is not
    with pytest.raises(ReplyError, match="no JSON object"):
        parse_reply("Sure! " + cut_off, ScenarioPlan)
    with pytest.raises(ReplyError, match=r"reference: Field required"):
        parse_reply(json.dumps({"subtopics": []}), ScenarioPlan)


def test_reask_until_the_output_is_usable() -> None:
    two = {**PLAN, "subtopics": PLAN["subtopics"] * 2}
    fixed = {**PLAN, "subtopics": [{"title": "A", "summary": "a"}, {"title": "B", "summary": "b"}]}
    model, calls = replay_generator("no json", json.dumps(two), json.dumps(fixed))
    result = asyncio.run(plan_scenario(model, SCENARIO, 2, retries=2))
    assert result.ok and [s.title for s in result.value.subtopics] == ["A", "B"]
    assert len(calls) == 3
    assert "holds no JSON object" in calls[1][-1].text
    assert "titles must be unique" in calls[2][-1].text
    assert result.usage["generator"].total_tokens > 0


def test_gives_up_after_the_retries_with_the_reason() -> None:
    model, calls = replay_generator(json.dumps(PLAN), json.dumps(PLAN))
    result = asyncio.run(plan_scenario(model, SCENARIO, 3, retries=1))
    assert len(calls) == 2 and not result.ok
    assert result.value is not None  # parsed, but still wrong
    assert result.issues == ["expected exactly 3 sub-topics, got 1"]


# --- validation -------------------------------------------------------------------------------


def test_scripted_env_and_tasks_are_valid() -> None:
    env = good_env()
    assert validate_env(env) == []
    for level in (1, 2, 3):
        assert validate_task(good_task(level), env) == []


def test_generated_prompt_gets_state_and_tools_appended() -> None:
    prompt = render_system_prompt(good_env(), date="2025-06-16")
    assert "### Initial state" in prompt and "lookup_record" in prompt and "REC-7" in prompt


def test_invalid_env_problems() -> None:
    problems = validate_env(good_env("invalid"))
    assert any("duplicate tool name 'lookup_record'" in p for p in problems)
    assert any("days.type" in p for p in problems)
    data = scripted_env("Nurse", "Beds", "good")
    data["action_set_definitions"] = data["action_set_definitions"][:1]
    data["world_model_system_prompt"] += "\nState: {{initial_state}}"
    data["task_initial_state"]["queue"] = []
    data["action_set_definitions"][0]["example_output"] = "text"
    problems = validate_env(EnvConfig.model_validate(data))
    assert [p.split(":")[0] for p in problems] == [
        "action_set_definitions",
        "action_set_definitions[0] (lookup_record).example_output",
        "world_model_system_prompt",
        "state_description",
    ]


def test_invalid_task_problems() -> None:
    env = good_env()
    task = good_task(2).model_copy(deep=True)
    task.plan_calls[0].tool = "fetch_record"
    task.plan_calls[1].arguments["status"] = "deleted"
    problems = validate_task(task, env)
    assert any("plan_calls[0]: unknown tool 'fetch_record'" in p for p in problems)
    assert any("'deleted' is not one of" in p for p in problems)
    assert any("solution_plan calls" in p for p in problems)

    task = TaskDraft.model_validate(
        {
            **good_task(3).model_dump(),
            "checks": [
                {"kind": "tool_not_called", "tool": "notify_party"},
                {"kind": "tool_called", "tool": "lookup_record", "arguments": {"id": "REC-7"}},
                {"kind": "answer_contains", "values": ["Dana"]},
                {"kind": "answer_excludes", "values": ["dana"]},
            ],
        }
    )
    problems = validate_task(task, env)
    assert any("has no parameter(s) ['id']" in p for p in problems)
    assert any("both required and excluded: ['dana']" in p for p in problems)
    task.checks = task.checks[:1]
    assert any("the plan itself fails" in p for p in validate_task(task, env))
    task.checks = [StateEqualsCheck(path="/records/0/status", value="closed")]
    assert any("need the explicit state mode" in p for p in validate_task(task, env))


# --- repair -----------------------------------------------------------------------------------


def test_repair_reasks_an_unusable_patch_and_applies_the_fix() -> None:
    env, task = good_env("repairable"), good_task(2)
    fixed = env.model_dump()
    fixed["task_initial_state"]["records"].append({"record_id": "REC-7", "owner": "Dana Ortiz"})
    other_level = {**task.model_dump(), "difficulty_level": 3}
    model, calls = replay_generator(
        json.dumps({"diagnosis": "other", "explanation": "x", "config": None, "task": None}),
        json.dumps({"diagnosis": "other", "explanation": "x", "task": other_level}),
        json.dumps(
            {"diagnosis": "impossible_state", "explanation": "added REC-7", "config": fixed}
        ),
    )
    result = asyncio.run(
        repair_instance(
            model,
            SCENARIO,
            Subtopic(title="Beds", summary="s"),
            env,
            task,
            "REC-7 not found",
            retries=2,
        )
    )
    assert "both config and task are null" in calls[1][-1].text
    assert "difficulty_level must stay 2" in calls[2][-1].text
    assert "<evidence>\nREC-7 not found\n</evidence>" in calls[0][1].text
    assert result.ok and result.value.diagnosis is Diagnosis.IMPOSSIBLE_STATE
    assert result.value.changed == ["config"] and result.value.task == task
    assert result.value.env.environment_name.startswith("env_")
    assert result.value.env.environment_name != env.environment_name


def test_scripted_generator_profiles() -> None:
    generator = ScriptedGenerator({"A": ["good", "trivial"]})
    assert [generator.profile("A", i) for i in range(3)] == ["good", "trivial", "good"]
    with pytest.raises(ValueError, match="unknown profiles"):
        ScriptedGenerator(["great"]).profile("A", 0)


# --- selection --------------------------------------------------------------------------------


def level(difficulty: int, passed: int, scored: int) -> LevelRate:
    return LevelRate(difficulty=difficulty, instances=1, passed=passed, scored=scored)


@pytest.mark.parametrize(
    ("levels", "chosen", "why"),
    [
        ([level(1, 2, 3), level(2, 1, 3), level(3, 0, 3)], 2, "lowest autonomous rate in (0, 1)"),
        ([level(1, 1, 3), level(2, 1, 3), level(3, 2, 3)], 2, "lowest"),  # tie -> harder
        ([level(1, 1, 2), level(3, 2, 4)], 3, "lowest"),  # equal rates, different counts
        ([level(1, 0, 3), level(2, 0, 3)], 2, "took the hardest level at 0"),
        ([level(1, 3, 3)], None, "no level left"),
        ([], None, "no level left"),
    ],
)
def test_select_difficulty(levels, chosen, why) -> None:
    selection = select_difficulty(levels)
    assert selection.difficulty == chosen and why in selection.reason


def test_pool_levels_pools_runs_per_level() -> None:
    pooled = pool_levels([(2, 1, 3), (3, 0, 3), (2, 2, 3)])
    assert [(x.difficulty, x.instances, x.passed, x.scored) for x in pooled] == [
        (2, 2, 3, 6),
        (3, 1, 0, 3),
    ]
    assert pooled[0].rate == 0.5


# --- the store --------------------------------------------------------------------------------


def test_store_is_atomic_and_skips_what_is_done(tmp_path: Path) -> None:
    store = ArtifactStore(tmp_path)
    made = []

    async def make():
        made.append(1)
        return StageResult[Subtopic](value=Subtopic(title="t", summary="s"))

    kind = StageResult[Subtopic]
    first = asyncio.run(store.cached("a/b", kind, make))
    again = asyncio.run(store.cached("a/b", kind, make))
    assert first == again and made == [1]
    assert [p.name for p in (tmp_path / "a").iterdir()] == ["b.json"]  # no temporary left
    store.path("a/b").write_text("{broken")
    asyncio.run(store.cached("a/b", kind, make))
    assert made == [1, 1]


def test_models_are_usable_by_name() -> None:
    model = get_model("occubench/scripted-generator", profiles=["trivial"])
    assert str(model) == "occubench/scripted-generator"


def test_role_costs_price_each_role_at_its_model() -> None:
    tokens = {
        "generator": TokenUsage(input_tokens=2_000_000, output_tokens=500_000),
        "agent": TokenUsage(input_tokens=10),
    }
    prices = PriceTable(models={"g": ModelPrice(input_per_mtok=1.0, output_per_mtok=4.0)})
    costs = role_costs(tokens, {"generator": "g", "agent": "a"}, prices)
    assert costs == {"generator": 4.0, "agent": None}

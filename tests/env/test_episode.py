"""The gym API: an episode run by hand, and its Gymnasium wrapper."""

from __future__ import annotations

import json

import anyio
import pytest
from inspect_ai.model import get_model

from occubench.config import EvalOptions, RunConfig
from occubench.env import EpisodeOver, ToolCallAction, make_episode
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale import run_eval
from occubench.scripted import BEHAVIOURS

TASK = 1002


async def by_hand(policy: str, **settings):
    """Run ``policy`` on the episode's own conversation, call by call."""
    episode = make_episode(
        "reference", TASK, simulator="occubench/canned", protocol="occubench", **settings
    )
    start = await episode.reset()
    while True:
        reply = BEHAVIOURS[policy](episode.messages, [])
        if not reply.tool_calls:
            return episode, start, await episode.grade(reply.content)
        (tool, arguments), *_ = reply.tool_calls
        await episode.step(ToolCallAction(tool=tool, arguments=arguments))


def test_an_episode_by_hand_has_the_fault_log_of_the_equivalent_run(tmp_path):
    settings = dict(env_mode="E3", fault_count=2, fault_duration=2, seed=7, with_plan=True)
    episode, start, grade = anyio.run(lambda: by_hand("careful", **settings))
    assert start.task_id == TASK and "Call " in start.instruction  # with the plan
    assert [t.name for t in start.tools] == [s.name for s in episode.env.action_set_definitions]
    assert grade.passed is True and grade.checks_passed == grade.checks_total

    config = RunConfig(dataset="reference", task_ids=[TASK], protocol="occubench", **settings)
    outcome = run_eval(
        "occubench/occubench",
        config.task_args(),
        log_dir=str(tmp_path),
        model="occubench/careful",
        roles={Role.SIMULATOR: "occubench/canned"},
        options=EvalOptions(),
    )
    (row,) = read_runs(outcome.logs)
    assert episode.record.fault_log == row.faults and row.faults_applied > 0
    assert episode.record.tool_calls == row.tool_calls and row.passed is grade.passed


def test_steps_refuse_bad_calls_and_report_faults():
    async def go():
        episode = make_episode(
            "reference",
            TASK,
            simulator=get_model("occubench/canned"),
            env_mode="E1",
            seed=0,
            protocol="occubench",
        )
        with pytest.raises(RuntimeError, match="reset"):
            await episode.step(ToolCallAction(tool="x"))
        start = await episode.reset()
        tool = start.tools[0].name
        unknown = await episode.step(ToolCallAction(tool="nope"))
        not_json = await episode.step(ToolCallAction(tool=tool, arguments="{oops"))
        steps = [
            await episode.step(ToolCallAction(tool=tool, arguments={"station_id": "N4-S2"}))
            for _ in range(16)
        ]
        grade = await episode.grade("nothing")
        with pytest.raises(EpisodeOver):
            await episode.step(ToolCallAction(tool=tool, arguments={}))
        with pytest.raises(RuntimeError, match="once"):
            await episode.reset()
        return episode, unknown, not_json, steps, grade

    episode, unknown, not_json, steps, grade = anyio.run(go)
    assert unknown.refused.value == "unknown_tool" and unknown.call_index is None
    assert not_json.refused.value == "not_json"
    assert [s.call_index for s in steps] == list(range(16))
    faulted = [s for s in steps if s.faults]
    assert faulted and all(f.explicit for s in faulted for f in s.faults)
    assert all("error" in json.loads(s.observation) for s in faulted)
    assert grade.passed is False and episode.record.stop_reason == "answered"
    assert len(episode.record.fault_log) == sum(len(s.faults) for s in steps)


def test_episodes_share_no_state():
    async def go():
        one = make_episode("reference", TASK, simulator="occubench/canned")
        two = make_episode("reference", TASK, simulator="occubench/canned")
        start = await one.reset()
        await two.reset()
        await one.step(ToolCallAction(tool=start.tools[0].name, arguments={"station_id": "N4-S2"}))
        return one, two

    one, two = anyio.run(go)
    assert one.record.tool_calls == 1 and two.record.tool_calls == 0
    assert len(one.messages) == len(two.messages) + 2


def test_gymnasium_wrapper_runs_an_episode():
    pytest.importorskip("gymnasium", reason="the gym extra (gymnasium) is not installed")
    from gymnasium.utils.env_checker import check_env

    from occubench.env.gymnasium import OccuBenchEnv

    env = OccuBenchEnv(
        "reference", TASK, simulator="occubench/canned", env_mode="E2", with_plan=True
    )
    check_env(env, skip_render_check=True)
    observation, info = env.reset(seed=3)
    assert env.observation_space.contains(observation)
    assert json.loads(observation)["instruction"] and info["task_id"] == TASK
    assert env.episode is not None and env.episode.config.seed == 3
    reward, terminated = 0.0, False
    while not terminated:
        reply = BEHAVIOURS["careful"](env.episode.messages, [])
        if reply.tool_calls:
            (tool, arguments), *_ = reply.tool_calls
            action = json.dumps({"tool": tool, "arguments": arguments})
        else:
            action = json.dumps({"answer": reply.content})
        observation, reward, terminated, truncated, info = env.step(action)
        assert env.observation_space.contains(observation) and not truncated
    assert reward == 1.0 and info["grade"]["passed"] is True
    env.close()


def test_the_opening_is_what_reset_gives():
    episode = make_episode("reference", TASK, simulator="occubench/canned", with_plan=True)
    opening = episode.opening()
    assert episode.messages[0].role != "system"  # reading it opened nothing
    assert anyio.run(episode.reset) == opening


def test_a_call_past_the_budget_gets_the_loops_message_and_never_runs():
    """The one rule (``CallRule``): the budget comes first, even for a malformed call."""

    async def go():
        episode = make_episode(
            "reference", TASK, simulator="occubench/canned", protocol="occubench", max_tool_calls=2
        )
        tool = (await episode.reset()).tools[0].name
        made = [
            await episode.step(ToolCallAction(tool=tool, arguments={"station_id": "N4-S2"}))
            for _ in range(2)
        ]
        past = await episode.step(ToolCallAction(tool=tool, arguments={"station_id": "N4-S2"}))
        malformed = await episode.step(ToolCallAction(tool=tool, arguments="{oops"))
        return episode, made, past, malformed

    episode, made, past, malformed = anyio.run(go)
    assert [s.call_index for s in made] == [0, 1] and episode.record.tool_calls == 2
    for refused in (past, malformed):
        assert refused.refused.value == "tool_call_limit" and refused.call_index is None
        assert refused.observation.startswith("tool call limit of 2 reached: this call was not")
    assert episode.at_call_limit() and episode.record.stop_reason == "tool_call_limit"
    (error,) = {m.error.type for m in episode.messages if getattr(m, "error", None)}
    assert error == "limit"

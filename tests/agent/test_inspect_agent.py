"""``--agent``: any Inspect agent in place of the built-in loop, same tools and faults."""

from __future__ import annotations

import pytest

from occubench.agent import create_agent
from occubench.config import EvalOptions, RunConfig
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale import run_eval


def run(log_dir, **settings):
    config = RunConfig(dataset="reference", with_plan=True, protocol="occubench", **settings)
    outcome = run_eval(
        "occubench/occubench",
        config.task_args(),
        log_dir=str(log_dir),
        model="occubench/careful",
        roles={Role.SIMULATOR: "occubench/canned"},
        options=EvalOptions(),
    )
    return {int(r.task_id): r for r in read_runs(outcome.logs)}


@pytest.mark.parametrize("mode", ["E1", "E2"])
def test_react_over_the_reference_suite_matches_the_built_in_loop(tmp_path, mode):
    react = run(tmp_path / "react", agent="react", env_mode=mode)
    loop = run(tmp_path / "loop", env_mode=mode)
    assert sorted(react) == list(range(1001, 1011))
    for task, row in react.items():
        assert row.error is None and row.passed is True, row.error
        assert row.agent_model == "react [occubench/careful]"
        assert row.faults == loop[task].faults and row.faults_applied > 0
        assert row.tool_calls == loop[task].tool_calls
        assert row.stop_reason == "answered"


def test_the_tool_call_limit_ends_an_inspect_agent(tmp_path):
    rows = run(tmp_path, agent="react", task_ids=[1001], max_tool_calls=2)
    row = rows[1001]
    assert row.error is None and row.tool_calls == 2
    assert row.stop_reason == "tool_call_limit" and row.passed is False


def test_agent_arguments_reach_the_agent(tmp_path):
    rows = run(
        tmp_path, agent="react", agent_args='{"submit": false, "prompt": null}', task_ids=[1005]
    )
    assert rows[1005].passed is True  # without a submit tool the answer comes as text


def test_unknown_agents_are_clear_errors():
    with pytest.raises(ValueError, match="not found"):
        create_agent("no_such_module_xyz:agent", [], {})
    with pytest.raises(ValueError, match="registry"):
        create_agent("no_such_agent_xyz", [], {})
    with pytest.raises(ValueError, match="tools="):
        create_agent("inspect_ai.agent:react", [], {"no_such_argument": 1})


def test_an_inspect_agent_talks_with_the_user_until_the_user_ends(tmp_path):
    from user_fixtures import user_dataset

    config = RunConfig(
        dataset=str(user_dataset(tmp_path / "data")),
        protocol="occubench",
        agent="react",
        agent_args='{"submit": false, "prompt": null}',
    )
    outcome = run_eval(
        "occubench/occubench",
        config.task_args(),
        log_dir=str(tmp_path / "logs"),
        model="occubench/asking",
        roles={Role.SIMULATOR: "occubench/echo-simulator", Role.USER: "occubench/user-terse"},
        options=EvalOptions(),
    )
    (row,) = read_runs(outcome.logs)
    assert row.error is None and row.passed is True
    assert row.stop_reason == "user_ended" and row.user_ended is True
    assert (row.user_turns, row.user_errors, row.user_model) == (3, 0, "occubench/user-terse")

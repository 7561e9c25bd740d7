"""Tasks with a user, end to end: scripted agents and scripted users through the loop."""

import pytest

from conftest import SCRIPTED_ROLES, run_task
from occubench.agent import USER_TURN_METADATA, StopReason, episode_in
from occubench.users import UserCheck
from user_fixtures import user_dataset


def talk(tmp_path, agent, user, **brief):
    data = user_dataset(tmp_path / "data", **brief)
    roles = {**SCRIPTED_ROLES, "user": f"occubench/{user}"}
    log = run_task(tmp_path / "logs", agent=f"occubench/{agent}", roles=roles, dataset=str(data))
    (sample,) = log.samples
    return sample, episode_in(sample.store)


def test_an_asking_agent_with_a_cooperative_user_passes_and_the_user_ends(tmp_path):
    sample, episode = talk(tmp_path, "asking", "user-cooperative")
    assert sample.error is None
    assert sample.scores["occubench_scorer"].value == "C"
    assert "user" in sample.role_usage  # the user role's calls are counted as its own
    assert episode.stop_reason is StopReason.USER_ENDED
    turns = episode.user_turns
    assert [t.ended for t in turns] == [False, False, True]
    assert all(t.problems == [] and t.reasked == [] for t in turns)
    assert "INV-4471" in turns[0].reply
    heard = [m for m in sample.messages if USER_TURN_METADATA in (m.metadata or {})]
    assert [m.metadata[USER_TURN_METADATA] for m in heard] == [1, 2, 3]
    assert "###END###" not in heard[-1].text
    assert sample.output.completion.startswith("Done:")  # the agent's last message


def test_a_non_asking_agent_fails_what_only_the_user_knows(tmp_path):
    sample, episode = talk(tmp_path, "non-asking", "user-cooperative")
    assert episode.stop_reason is StopReason.USER_ENDED
    assert len(episode.user_turns) == 1
    assert sample.scores["occubench_scorer"].value == "I"
    assert episode.steps[0].arguments == {"invoice_number": "unknown", "shipment_id": "unknown"}


@pytest.mark.parametrize(
    ("user", "caught"),
    [
        ("user-goal-leaking", UserCheck.GOAL_DISCLOSED),
        ("user-early-stopping", UserCheck.END_BEFORE_ACTION),
        ("user-inventing", UserCheck.INVENTED_FACT),
    ],
)
def test_each_flawed_user_is_caught_re_asked_once_and_kept_as_a_user_error(tmp_path, user, caught):
    sample, episode = talk(tmp_path, "asking", user)
    first = episode.user_turns[0]
    assert caught in first.reasked
    assert caught in {p.check for p in first.problems}
    assert first.attempts == 2


def test_the_early_stopping_user_also_ends_on_a_question(tmp_path):
    _, episode = talk(tmp_path, "asking", "user-early-stopping")
    (turn,) = episode.user_turns
    assert {p.check for p in turn.problems} == {
        UserCheck.END_ON_QUESTION,
        UserCheck.END_BEFORE_ACTION,
    }
    assert episode.stop_reason is StopReason.USER_ENDED


def test_the_terse_user_passes_its_checks(tmp_path):
    sample, episode = talk(tmp_path, "asking", "user-terse")
    assert [t.problems for t in episode.user_turns] == [[], [], []]
    assert episode.steps[0].arguments == {"invoice_number": "INV-4471", "shipment_id": "SHP-208"}


def test_a_spent_turn_budget_ends_the_episode_as_such(tmp_path):
    sample, episode = talk(tmp_path, "asking", "user-cooperative", max_turns=1)
    assert episode.stop_reason is StopReason.USER_TURN_LIMIT
    assert len(episode.user_turns) == 1 and not episode.user_turns[0].ended


@pytest.mark.parametrize("protocol", ["paper", "occubench"])
def test_a_task_without_a_user_runs_as_before_and_never_calls_the_user(tmp_path, protocol):
    def messages(log):
        (sample,) = log.samples
        return sample, [(m.role, m.text) for m in sample.messages]

    roles = {**SCRIPTED_ROLES, "user": "occubench/user-cooperative"}
    with_user, said = messages(
        run_task(tmp_path / "a", roles=roles, task_ids="11", protocol=protocol)
    )
    plain, before = messages(run_task(tmp_path / "b", task_ids="11", protocol=protocol))
    assert said == before
    assert "user" not in with_user.role_usage
    assert episode_in(with_user.store).user_turns is None
    assert with_user.scores["occubench_scorer"].value == plain.scores["occubench_scorer"].value


def test_the_runs_turn_budget_holds_where_the_brief_sets_none(tmp_path):
    data = user_dataset(tmp_path / "data")
    roles = {**SCRIPTED_ROLES, "user": "occubench/user-cooperative"}
    log = run_task(
        tmp_path / "logs", agent="occubench/asking", roles=roles, dataset=str(data), user_turns=2
    )
    episode = episode_in(log.samples[0].store)
    assert episode.stop_reason is StopReason.USER_TURN_LIMIT and len(episode.user_turns) == 2

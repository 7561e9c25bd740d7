"""The noisy agent, judge and simulator: draws counted per ask, and the flips they make."""

import json

import pytest
from inspect_ai.model import ChatMessageUser, get_model

from conftest import run_task
from occubench.analysis import FlipCause, verdict_flips
from occubench.dataset import reference_suite_dir
from occubench.errors import UsageError
from occubench.results import read_runs
from occubench.scripted._noisy import NOISY_JUDGE_SHARE, Draws, noisy_judge

ASK = [ChatMessageUser(content="the same conversation")]


def test_the_nth_ask_of_a_conversation_always_draws_the_same():
    first, again, other = Draws("m", 0), Draws("m", 0), Draws("m", 1)
    drawn = [first.draw(ASK) for _ in range(5)]
    assert drawn == [again.draw(ASK) for _ in range(5)]
    assert len(set(drawn)) == 5 and all(0 <= d < 1 for d in drawn)
    assert drawn != [other.draw(ASK) for _ in range(5)]


def test_the_noisy_judge_turns_a_share_of_its_verdicts():
    request = [ChatMessageUser(content="<observation>\n{}\n</observation>")]
    judge = noisy_judge()
    verdicts = [json.loads(judge(request, []).content) for _ in range(200)]
    turned = [v for v in verdicts if v["feedback"].startswith("on second thought")]
    assert {v["is_correct"] for v in turned} == {True}  # the plain judge fails it: no answer
    assert abs(len(turned) / 200 - NOISY_JUDGE_SHARE) < 0.08


def test_the_provider_makes_them_and_names_them_among_the_known():
    model = get_model("occubench/noisy-agent", seed=3, memoize=False)
    assert model.name == "noisy-agent"
    with pytest.raises(UsageError, match="noisy-judge"):
        get_model("occubench/no-such-model", memoize=False)


def flips(folder, **task_args):
    run_task(
        folder,
        agent=get_model("occubench/noisy-agent", memoize=False),
        roles={"simulator": get_model("occubench/noisy-simulator", memoize=False)},
        dataset=str(reference_suite_dir()),
        with_plan=True,
        eval_args={"epochs": 5},
        **task_args,
    )
    (flip,) = verdict_flips(read_runs([folder]))
    return flip


def test_a_world_takes_the_simulators_share_of_flips_away(tmp_path):
    live = flips(tmp_path / "live")
    assert live.tasks == 10 and live.simulator_pairs > 0 and live.agent_pairs > 0
    assert live.unknown_pairs == live.verifier_pairs == 0  # checks grade: no judge to vary
    world = flips(tmp_path / "world", world=str(tmp_path / "w"), world_mode="record")
    assert world.simulator_pairs == 0 and world.agent_pairs > 0 and world.replayed > 0
    assert world.share(FlipCause.AGENT) == 1.0

"""``human/<name>``: a person's moves make the same sample a model's make."""

from __future__ import annotations

import anyio
import pytest
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageUser, get_model

from occubench.config import EvalOptions, RunConfig
from occubench.errors import UsageError
from occubench.play import Move, PlaySetup, human_model, pick_task, run_play
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale import run_eval

TASK = 1002
ANSWER = "Methane 0.62%, airflow 41.5 m3/s, last fan BF-7 at 1460 rpm, re-entry limit 1.0%."
MOVES = [
    Move(tool="get_sensor_reading", arguments={"station_id": "N4-S2"}),
    Move(tool="get_sensor_reading", arguments={"station_id": "N4-S2"}),  # after the fault
    Move(tool="list_fans", arguments={"panel": "North-4"}),
    Move(tool="get_reentry_limits", arguments={"panel": "North-4"}),
    Move(answer=ANSWER),
]
ROLES = {Role.SIMULATOR: "occubench/canned", Role.VERIFIER: "occubench/scripted-judge"}


class ScriptDesk:
    """A desk whose person makes these moves, in turn, and remembers what they were shown."""

    def __init__(self, moves):
        self.moves = list(moves)
        self.turns = []

    async def ask(self, turn):
        self.turns.append(turn)
        return self.moves.pop(0)


def config(**settings):
    base = dict(dataset="reference", task_ids=[TASK], protocol="occubench", env_mode="E1")
    return RunConfig(**{**base, "fault_count": 1, "fault_duration": 1, "seed": 0, **settings})


def conversation(sample):
    """A sample's messages as what was said: role, text, tool calls (ids and model left out)."""
    return [
        (m.role, m.text, [(c.function, c.arguments) for c in getattr(m, "tool_calls", None) or []])
        for m in sample.messages
    ]


def test_a_session_logs_the_sample_a_model_making_the_same_moves_logs(tmp_path):
    desk = ScriptDesk(MOVES)
    setup = PlaySetup(
        player="alice",
        simulator=ROLES[Role.SIMULATOR],
        verifier=ROLES[Role.VERIFIER],
        config=config(),
        log_root=str(tmp_path / "play"),
    )
    result = run_play(setup, desk)
    assert result.passed is True and result.stop_reason == "answered" and result.tool_calls == 4
    assert [f.kind for f in result.faults] == ["connection_refused"]

    first, second = desk.turns[:2]
    assert first.number == 1 and first.entries == [] and "N4-S2" in first.instruction
    assert [t.name for t in first.tools] == [
        "get_sensor_reading",
        "list_fans",
        "get_reentry_limits",
    ]
    assert "ECONNREFUSED" in second.entries[-1].text  # the fault, as the person saw it

    outputs = [{"tool": m.tool, "arguments": m.arguments} for m in MOVES[:-1]] + [ANSWER]
    model = get_model("occubench/replay", outputs=outputs, memoize=False)
    outcome = run_eval(
        "occubench/occubench",
        config().task_args(),
        log_dir=str(tmp_path / "model"),
        model=model,
        roles=ROLES,
        options=EvalOptions(retry_on_error=0),
    )
    (person,) = read_runs([result.log])
    (machine,) = read_runs(outcome.logs)
    assert person.agent_model == "human/alice" and machine.agent_model == "occubench/replay"
    same = (
        "passed",
        "faults",
        "tool_calls",
        "stop_reason",
        "checks_passed",
        "votes_yes",
        "env_mode",
    )
    assert {k: getattr(person, k) for k in same} == {k: getattr(machine, k) for k in same}
    (a,) = read_eval_log(result.log).samples
    (b,) = read_eval_log(outcome.logs[0]).samples
    assert conversation(a) == conversation(b)
    assert a.store == b.store  # episode, fault plan and log, simulator steps, grade
    assert a.scores["occubench_scorer"].value == b.scores["occubench_scorer"].value


def test_giving_up_is_an_empty_answer_graded_as_one(tmp_path):
    setup = PlaySetup(
        player="bob",
        simulator=ROLES[Role.SIMULATOR],
        verifier=ROLES[Role.VERIFIER],
        config=config(env_mode="E0"),
        log_root=str(tmp_path),
    )
    result = run_play(setup, ScriptDesk([Move(answer="")]))
    assert result.passed is False and result.answer == "" and result.tool_calls == 0


def test_a_person_only_answers_at_a_desk():
    model = get_model("human/alice", memoize=False)
    with pytest.raises(RuntimeError, match="only `occubench play` seats one"):
        anyio.run(lambda: model.generate([ChatMessageUser(content="hello")]))


@pytest.mark.parametrize("name", ["9lives", "a b", "x" * 41, "eve/../x", ""])
def test_a_player_name_that_is_not_one_is_refused(name):
    with pytest.raises(UsageError, match="letter"):
        human_model(name, ScriptDesk([]))


def test_the_task_is_the_one_asked_for_or_a_seeded_draw_from_the_selection():
    base = RunConfig(dataset="reference")
    assert pick_task(base, 1004) == 1004
    draws = {pick_task(base, None, seed) for seed in range(20)}
    assert len(draws) > 1 and draws <= set(range(1001, 1011))
    assert pick_task(base, None, 3) == pick_task(base, None, 3)
    hard = base.model_copy(update={"difficulty": [3]})
    assert pick_task(hard, None, 0) in {t.task_id for t in hard.load_tasks().tasks}
    with pytest.raises(UsageError, match="task 99999 is not in"):
        pick_task(base, 99999)
    with pytest.raises(UsageError, match="no task"):
        pick_task(base.model_copy(update={"difficulty": [9]}), None)

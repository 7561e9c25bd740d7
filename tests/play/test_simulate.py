"""A person as the simulator: the turn they see, the observation they write, the checks on it."""

from __future__ import annotations

import io
import json

import anyio
import pytest
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    get_model,
)
from rich.console import Console

from occubench.config import RunConfig
from occubench.errors import UsageError
from occubench.play import (
    MAX_OBSERVATION_CHARS,
    PersonLeft,
    PlayInfo,
    PlaySetup,
    SimTurn,
    TerminalSimDesk,
    draft_observation,
    human_model,
    observation_problems,
    run_simulate,
    sim_turn_of,
)

INFO = PlayInfo(
    player="gail",
    task_id=1002,
    scenario="Underground Airflow",
    industry="Mining",
    domain="Ventilation",
    difficulty=1,
    env_mode="E0",
    fault_count=0,
    fault_duration=1,
    seed=0,
    protocol="occubench",
    checks_arguments=True,
    max_tool_calls=0,
    simulator="human/gail",
)
READING = {"station_id": "N4-S2", "methane_pct": 0.62}


def messages(*, paper: bool = False):
    """A simulator request: the system prompt, one earlier exchange, the current call."""
    call = json.dumps({"name": "get_sensor_reading", "arguments": {"station_id": "N4-S2"}})
    if paper:
        return [
            ChatMessageSystem(content="You simulate a mine.\x1b[31m"),
            ChatMessageUser(content=f"<agent_action>\n{call}\n</agent_action>"),
            ChatMessageAssistant(
                content=f"<predicted_observation>\n{json.dumps(READING)}\n</predicted_observation>"
            ),
            ChatMessageUser(content=f"<agent_action>\n{call}\n</agent_action>\n### FORMAT"),
        ]
    return [
        ChatMessageSystem(content="You simulate a mine."),
        ChatMessageUser(content=call),
        ChatMessageAssistant(content=f"<observation>{json.dumps(READING)}</observation>"),
        ChatMessageUser(content=call),
    ]


@pytest.mark.parametrize("paper", [False, True])
def test_the_turn_is_the_simulator_request_without_the_layout_tags(paper):
    turn = sim_turn_of(messages(paper=paper), 2, draft="{}")
    assert turn.number == 2 and turn.system_prompt.startswith("You simulate a mine.")
    assert len(turn.history) == 1 and json.loads(turn.history[0].observation) == READING
    assert json.loads(turn.history[0].call)["name"] == "get_sensor_reading"
    assert turn.call.startswith('{"name": "get_sensor_reading"') and turn.draft == "{}"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "empty"),
        ("[1, 2]", "a JSON object is needed, not an array"),
        ('"text"', "not a string"),
        ('{"a": NaN}', "NaN is not a JSON number"),
        ('{"a": 1', "not JSON: Expecting ',' delimiter at line 1"),
        ('{"a": ' * 101 + "1" + "}" * 101, "nested more than 100 levels"),
        ('{"a": "' + "x" * MAX_OBSERVATION_CHARS + '"}', "longer than 100000 characters"),
    ],
)
def test_an_observation_that_is_not_one_json_object_is_refused_with_its_problem(text, problem):
    problems = observation_problems(text)
    assert problems and problem in " ".join(problems)


def test_a_draft_is_read_from_either_layout_and_offered_as_json():
    tagged = f"<predicted_observation>\n{json.dumps(READING)}\n</predicted_observation>"
    for reply in (json.dumps(READING), tagged, f"Sure: {json.dumps(READING)} done"):
        assert json.loads(draft_observation(reply)) == READING
    assert draft_observation("no observation") == "no observation"  # accepting it is refused


def desk(lines: str) -> tuple[TerminalSimDesk, io.StringIO]:
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False, color_system=None)
    return TerminalSimDesk(INFO, console, io.StringIO(lines), echo=True), out


def turn(draft: str | None = None, number: int = 1) -> SimTurn:
    return sim_turn_of(messages(), number, draft)


def test_the_terminal_reads_a_json_object_over_lines_and_asks_again_until_it_is_one():
    typed = '[1]\n{"a": NaN}\n{"station_id": "N4-S2",\n "methane_pct": 0.62}\n'
    person, out = desk(typed)
    written = anyio.run(person.write, turn())
    assert json.loads(written) == READING
    shown = out.getvalue()
    assert "Simulator system prompt:" in shown and "You simulate a mine." in shown
    assert "a JSON object is needed, not an array" in shown
    assert "NaN is not a JSON number" in shown


def test_a_draft_is_accepted_or_shown_to_edit_and_a_bad_draft_is_not_accepted():
    person, out = desk("edit\naccept\n")
    assert json.loads(anyio.run(person.write, turn(draft=json.dumps(READING)))) == READING
    assert out.getvalue().count('"methane_pct": 0.62') >= 3  # history, draft, edit
    person, out = desk('accept\n{"ok": true}\n')
    assert json.loads(anyio.run(person.write, turn(draft="no observation"))) == {"ok": True}
    assert "Not an observation:" in out.getvalue()
    person, out = desk('accept\n{"ok": 1}\n')
    anyio.run(person.write, turn())
    assert "No draft is offered" in out.getvalue()


def test_the_end_of_the_input_is_the_person_leaving():
    person, _ = desk('{"a": 1,\n')
    with pytest.raises(PersonLeft):
        anyio.run(person.write, turn())


def test_control_sequences_from_the_prompt_are_not_printed():
    person, out = desk('{"a": 1}\n')
    anyio.run(person.write, sim_turn_of(messages(paper=True), 1))
    assert "\x1b" not in out.getvalue()


class Writer:
    """A person who writes the same observation every time, and remembers the turns."""

    def __init__(self):
        self.turns: list[SimTurn] = []

    async def write(self, turn: SimTurn) -> str:
        self.turns.append(turn)
        return json.dumps(READING)


def test_in_the_simulator_role_the_person_answers_the_request_and_is_never_retried():
    writer = Writer()
    model = human_model("gail", writer=writer, draft=get_model("occubench/canned"))
    output = anyio.run(model.generate, messages())
    assert json.loads(output.completion) == READING and output.model == "human/gail"
    assert writer.turns[0].draft is not None  # the canned model's answer was offered
    assert model.api.should_retry(RuntimeError("gone")) is False
    assert model.config == GenerateConfig()


def setup(**changes):
    base = dict(
        player="gail",
        simulator="human/gail",
        verifier="occubench/scripted-judge",
        agent_model="occubench/careful",
        config=RunConfig(dataset="reference", task_ids=[1002], with_plan=True),
    )
    return PlaySetup(**{**base, **changes})


def test_a_session_as_the_simulator_needs_an_agent_and_a_judge(tmp_path):
    with pytest.raises(UsageError, match="--agent-model"):
        run_simulate(setup(agent_model=None, log_root=str(tmp_path)), Writer())
    with pytest.raises(UsageError, match="--verifier-model"):
        run_simulate(setup(verifier=None, log_root=str(tmp_path)), Writer())
    assert not any(tmp_path.iterdir())


def test_the_agent_runs_the_task_on_the_observations_the_person_writes(tmp_path):
    writer = Writer()
    result = run_simulate(setup(log_root=str(tmp_path)), writer)
    assert result.tool_calls == len(writer.turns) >= 3
    assert [len(t.history) for t in writer.turns] == list(range(len(writer.turns)))
    assert all('"methane_pct": 0.62' in e.observation for e in writer.turns[-1].history)


def test_an_observation_typed_past_the_bound_is_read_to_its_end_and_refused():
    chunk = '"' + "x" * 40_000 + '",'
    person, out = desk('{"a": [\n' + f"{chunk}\n" * 3 + '"end"]}\n\n{"ok": 1}\n')
    assert json.loads(anyio.run(person.write, turn())) == {"ok": 1}
    assert "longer than 100000 characters" in out.getvalue()

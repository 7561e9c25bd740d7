"""The seats of a play session: which models each seat needs, what the page answers to."""

from __future__ import annotations

import pytest

from occubench.config import RunConfig
from occubench.errors import UsageError
from occubench.play import SeatChoice, page_hosts, seated
from occubench.roles import Role

SIM = "occubench/canned"
AGENT = "occubench/reference"


def test_each_seat_gets_the_models_of_the_others():
    assert seated(Role.AGENT, "ana", SIM, None) == (SIM, None)
    assert seated(Role.USER, "ana", SIM, AGENT) == (SIM, AGENT)
    assert seated(Role.SIMULATOR, "ana", None, AGENT) == ("human/ana", AGENT)


@pytest.mark.parametrize(
    ("seat", "simulator", "agent", "message"),
    [
        (Role.AGENT, None, None, "--simulator-model is required"),
        (Role.AGENT, SIM, AGENT, "you are the agent"),
        (Role.USER, SIM, None, "--as user: name the agent"),
        (Role.USER, None, AGENT, "--as user: --simulator-model is required"),
        (Role.SIMULATOR, None, None, "--as simulator: name the agent"),
        (Role.SIMULATOR, SIM, AGENT, "leave out --simulator-model"),
    ],
)
def test_a_model_missing_or_given_for_the_persons_seat_is_refused(seat, simulator, agent, message):
    with pytest.raises(UsageError, match=message):
        seated(seat, "ana", simulator, agent)


def test_a_draft_only_in_the_simulators_seat_and_that_seat_only_in_the_terminal():
    with pytest.raises(UsageError, match="only with --as simulator"):
        SeatChoice(Role.AGENT, "ana", SIM, draft="occubench/canned").models()
    with pytest.raises(UsageError, match="played in the terminal"):
        SeatChoice(Role.SIMULATOR, "ana", agent=AGENT, browser=True).models()


def test_the_simulators_seat_records_into_a_world(tmp_path):
    choice = SeatChoice(Role.SIMULATOR, "ana", agent=AGENT)
    base = RunConfig(world=str(tmp_path / "w"), world_mode="replay")
    with pytest.raises(UsageError, match="--world-mode record"):
        choice.setup(base, str(tmp_path / "logs"), None, None)


def test_a_session_of_one_task_with_its_dataset_made_absolute(tmp_path):
    choice = SeatChoice(Role.AGENT, "ana", SIM, verifier="occubench/scripted-judge")
    setup = choice.setup(RunConfig(dataset="reference", difficulty=[3]), str(tmp_path), None, 7)
    assert len(setup.config.task_ids or []) == 1 and setup.config.difficulty is None
    assert setup.config.dataset_dir().is_absolute()
    assert (setup.simulator, setup.player, setup.agent_model) == (SIM, "ana", None)


def test_preflight_tries_the_machines_and_the_draft_stands_in_for_the_person():
    assert SeatChoice(Role.AGENT, "ana", SIM).preflight_roles() == {Role.SIMULATOR: SIM}
    drafted = SeatChoice(Role.SIMULATOR, "ana", agent=AGENT, draft=SIM, verifier=AGENT)
    assert drafted.preflight_roles() == {Role.SIMULATOR: SIM, Role.VERIFIER: AGENT}
    assert SeatChoice(Role.SIMULATOR, "ana", agent=AGENT).preflight_roles() == {}


def test_the_page_answers_to_the_loopback_names_the_host_and_the_allowed_ones():
    hosts = page_hosts("0.0.0.0", ["box.local", "localhost"])
    assert hosts == ["127.0.0.1", "localhost", "::1", "0.0.0.0", "box.local"]

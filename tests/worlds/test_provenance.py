"""Forged worlds: an entry changed and sealed again, an earlier-dated rival answer.

A digest can be sealed again by anyone; the run log that recorded an entry holds the
answer the run was given (``world verify --logs``). A world holding two answers for one
key is said before a run replays it, and refused by a setting.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from typer.testing import CliRunner

from agent.test_world_run import Counted, roles
from conftest import RELEASE_DIR, run_task
from occubench.cli import app
from occubench.errors import UsageError
from occubench.results import check_provenance
from occubench.worlds import ProblemKind, World, WorldEntry, close_shared_worlds


@pytest.fixture
def recorded(tmp_path):
    """A world recorded by a run, and the run's logs."""
    world, logs = tmp_path / "world", tmp_path / "logs"
    run_task(logs, roles=roles(Counted()), world=str(world))
    close_shared_worlds()
    return world, logs


def segment(world):
    (found,) = (world / "segments").glob("*.jsonl")
    return found


def entries(world):
    lines = segment(world).read_text().splitlines()
    return [WorldEntry.model_validate_json(line) for line in lines]


def add_rival(world):
    """A second answer to the first entry's key, dated a day earlier (to be the one used)."""
    first = entries(world)[0]
    rival = first.model_copy(
        update={"text": '{"status": "approved"}', "created": first.created - timedelta(days=1)}
    ).sealed()
    with segment(world).open("ab") as out:
        out.write(rival.line())
    return rival


def test_each_recorded_entry_names_its_run_sample_and_matches_its_log(recorded):
    world, logs = recorded
    made = entries(world)
    assert made and all(e.recorded_in is not None for e in made)
    found = check_provenance(world, [logs])
    assert found.logs == 1 and found.matched == len(made) and found.problems == []
    result = CliRunner().invoke(app, ["world", "verify", str(world), "--logs", str(logs)])
    assert result.exit_code == 0, result.output
    assert f"{len(made)} entries as their run recorded them, 0 changed since" in " ".join(
        result.output.split()
    )


def test_an_entry_changed_and_sealed_again_is_caught_by_its_log(recorded):
    world, logs = recorded
    made = entries(world)
    forged = made[0].model_copy(update={"text": '{"status": "approved"}'}).sealed()
    segment(world).write_bytes(b"".join(e.line() for e in [forged, *made[1:]]))

    plain = CliRunner().invoke(app, ["world", "verify", str(world)])
    assert plain.exit_code == 0  # its digest holds: a digest alone cannot tell
    found = check_provenance(world, [logs])
    assert [p.kind for p in found.problems] == [ProblemKind.PROVENANCE]
    assert found.problems[0].line == 1 and "changed after the run" in found.problems[0].detail
    result = CliRunner().invoke(app, ["world", "verify", str(world), "--logs", str(logs)])
    assert result.exit_code == 1 and "provenance" in result.output


def test_a_rival_answer_dated_earlier_is_said_before_a_replay_and_refused_by_a_setting(
    recorded, tmp_path
):
    world, _ = recorded
    made, rival = entries(world), add_rival(world)
    with World.open(world, writable=False) as opened:
        assert opened.conflicts() == [made[0].key]
        assert opened.lookup(made[0].key) == rival  # the earliest is the one answered

    with pytest.raises(UsageError, match=r"different answers for 1 key\(s\).*refused"):
        run_task(tmp_path / "refused", roles=roles(Counted()), world=str(world),
                 world_mode="replay", world_conflicts="refuse")  # fmt: skip
    close_shared_worlds()
    replay = CliRunner().invoke(
        app,
        ["run", "--agent-model", "occubench/schema-agent", "--simulator-model",
         "occubench/echo-simulator", "--verifier-model", "occubench/scripted-judge",
         "--dataset", str(RELEASE_DIR), "--protocol",
         "occubench", "--world", str(world), "--world-mode", "replay", "--world-conflicts",
         "refuse", "--log-dir", str(tmp_path / "cli"), "--display", "none"],
    )  # fmt: skip
    assert replay.exit_code == 2, replay.output
    assert "different answers for 1 key(s)" in " ".join(replay.output.split())


def test_a_replay_of_a_conflicted_world_says_so_and_runs(recorded, tmp_path):
    world, _ = recorded
    add_rival(world)
    replay = CliRunner().invoke(
        app,
        ["run", "--agent-model", "occubench/schema-agent", "--simulator-model",
         "occubench/echo-simulator", "--verifier-model", "occubench/scripted-judge",
         "--dataset", str(RELEASE_DIR), "--protocol", "occubench", "--world", str(world),
         "--world-mode", "replay", "--log-dir", str(tmp_path / "cli"), "--display", "none",
         "--workers", "1"],
    )  # fmt: skip
    said = " ".join(replay.output.split())
    assert "Warning: the world" in said and "different answers for 1 key(s)" in said
    assert "answered with its earliest entry by time" in said
    assert replay.exit_code in (0, 3), replay.output  # it ran

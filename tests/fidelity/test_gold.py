"""The audit against gold: a world people wrote, replayed, each simulator scored against it."""

from __future__ import annotations

import json

import anyio
import pytest
from inspect_ai.model import get_model

from occubench.agent import environment_simulator
from occubench.config import ResolvedRun, RunConfig
from occubench.errors import UsageError
from occubench.fidelity import GoldMetric, compare_answers, gold_audit, gold_table, normalised
from occubench.play import SimTurn, human_model
from occubench.simulator import world_context
from occubench.worlds import EntrySource, World, WorldMode

FLAWED = ["canned", "fabricating", "omitting", "inconsistent", "rule-inventing"]
REPEATS = 3
"""Each plan call is made three times, as the careful reference agent does."""
RUN = ResolvedRun.of(RunConfig(dataset="reference", protocol="occubench"))


class Accepting:
    """A scripted person: writes the canned observation offered as the draft."""

    async def write(self, turn: SimTurn) -> str:
        assert turn.draft is not None
        return turn.draft


async def _write_gold(path: str, tasks: int) -> None:
    world = World.open(path, writable=True, description="gold of the reference tasks")
    person = human_model("gail", writer=Accepting(), draft=get_model("occubench/canned"))
    loaded = RUN.config.load_tasks()
    try:
        for task in loaded.tasks[:tasks]:
            env = loaded.envs[task.env_name]
            simulator = environment_simulator(RUN, env, person)
            simulator.use_world(world, world_context(simulator, env), WorldMode.RECORD)
            for step in task.reference_plan.steps:
                for _ in range(REPEATS):
                    await simulator.observe(step.tool, step.arguments)
    finally:
        world.close()


@pytest.fixture(scope="module")
def gold(tmp_path_factory):
    """A gold world of the ten reference tasks, written by a scripted person."""
    path = str(tmp_path_factory.mktemp("gold") / "world")
    anyio.run(_write_gold, path, 10)
    return path


def test_the_gold_world_holds_only_a_persons_entries(gold):
    world = World.open(gold, writable=False)
    entries, contexts = list(world.entries()), world.contexts()
    world.close()
    assert len(entries) == 10 * 3 * REPEATS
    assert {(e.source, e.author) for e in entries} == {(EntrySource.PERSON, "gail")}
    assert {c.model for c in contexts.values()} == {"human/gail"}


def test_each_flawed_simulator_is_caught_on_its_own_metric(gold):
    models = [get_model(f"occubench/{name}") for name in FLAWED]
    report = gold_audit(gold, models, RUN, verifier=get_model("occubench/rule-judge"))
    assert report.gold_entries == 90 and report.authors == ["gail"] and not report.errors
    assert not report.notes
    parts = {
        name: {m: report.overall(f"occubench/{name}").parts[m].mean for m in GoldMetric}
        for name in FLAWED
    }
    assert set(parts["canned"].values()) == {1.0}
    caught = {
        "fabricating": GoldMetric.GROUNDED,
        "omitting": GoldMetric.COMPLETE,
        "inconsistent": GoldMetric.NUMBERS,
        "rule-inventing": GoldMetric.TEXT,
    }
    for name, metric in caught.items():
        assert parts[name][metric] < 0.95, (name, parts[name])
        others = set(caught.values()) - {metric}
        assert all(parts[name][m] == 1.0 for m in others), (name, parts[name])
        assert parts[name][GoldMetric.JSON_OBJECT] == 1.0 and parts[name][GoldMetric.KEYS] == 1.0
    assert parts["inconsistent"][GoldMetric.CONSISTENT] < 1.0  # its repeats disagree
    assert parts["rule-inventing"][GoldMetric.REALISM] < 1.0  # the judge notices
    assert parts["fabricating"][GoldMetric.REALISM] == 1.0
    found = report.overall("occubench/omitting")
    assert found.parts[GoldMetric.COMPLETE].low <= found.parts[GoldMetric.COMPLETE].mean
    assert found.parts[GoldMetric.COMPLETE].n == 90
    envs = [g for g in report.groups if g.simulator == "occubench/canned" and g.env_name]
    assert len(envs) == 10 and all(g.entries == 9 and g.scenario for g in envs)
    table = gold_table(report)
    assert table.row_count == len(FLAWED)
    assert gold_table(report, by_env=True).row_count == 10 * len(FLAWED)


def test_a_world_without_a_persons_entry_cannot_be_audited(tmp_path):
    World.open(tmp_path / "empty", writable=True).close()
    with pytest.raises(UsageError, match="no entry written by a person"):
        gold_audit(tmp_path / "empty", [get_model("occubench/canned")], RUN)


def test_answers_are_compared_by_leaf_ids_and_numbers_exactly_text_normalised():
    gold = {"items": [{"item_id": "A-1", "qty": 2}, {"item_id": "A-2", "qty": 3}], "note": "Ok"}
    same, problems = compare_answers(gold, json.loads(json.dumps(gold)) | {"note": " OK "})
    assert set(same.values()) == {1.0} and not problems
    fewer, _ = compare_answers(gold, {"items": gold["items"][:1], "note": "Ok"})
    assert fewer[GoldMetric.COMPLETE] == 3 / 5 and fewer[GoldMetric.GROUNDED] == 1.0
    more, _ = compare_answers(gold, {**gold, "items": [*gold["items"], {"item_id": "A-9"}]})
    assert more[GoldMetric.GROUNDED] == 5 / 6 and more[GoldMetric.COMPLETE] == 1.0
    other, problems = compare_answers(
        gold, {"items": [{"item_id": "A-1", "qty": 2.5}, {"item_id": "a-2", "qty": 3}], "note": "x"}
    )
    assert other[GoldMetric.NUMBERS] == 0.5 and other[GoldMetric.IDS] == 0.5
    assert other[GoldMetric.TEXT] == 0.0 and any("qty" in p for p in problems)
    assert compare_answers(gold, [1])[0] == {GoldMetric.JSON_OBJECT: 0.0}
    assert compare_answers({"ok": True}, {"ok": 1})[0][GoldMetric.NUMBERS] == 0.0
    assert normalised("  Café\u00a0 OPEN ") == "café open"


HOSTILE = "eve\x1b]0;owned\x07\x1b]52;c;cm0gLXJm\x07\x1b[2J\x1b]8;;https://elsewhere.example\x07x"
"""An author name with a title change, a clipboard write, a screen clear and a link."""


def test_a_shared_gold_worlds_author_names_are_shown_as_plain_text(tmp_path):
    """A sender edits the author of every entry (and seals each again) before sharing."""
    from pathlib import Path

    from rich.console import Console

    from occubench.worlds import WorldEntry

    path = str(tmp_path / "world")
    anyio.run(_write_gold, path, 1)
    for segment in (Path(path) / "segments").glob("*.jsonl"):
        entries = [
            WorldEntry.model_validate_json(line) for line in segment.read_text().splitlines()
        ]
        hostile = [e.model_copy(update={"author": HOSTILE}).sealed() for e in entries]
        segment.write_bytes(b"".join(e.line() for e in hostile))
    report = gold_audit(path, [get_model("occubench/canned")], RUN)
    assert report.authors == [HOSTILE]  # the world holds the name as sent
    console = Console(record=True, width=300, force_terminal=True, color_system=None)
    for by_env in (False, True):
        console.print(gold_table(report, by_env=by_env))
    shown = console.export_text()
    assert "\x1b" not in shown and "\x07" not in shown
    assert "entries by evex;" in shown  # the sequences dropped whole, the name kept

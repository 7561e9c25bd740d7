"""Step fidelity against the twin: each flaw in its column, a forgotten write, failures apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig, Model, get_model

from occubench.calls import named_model
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import EnvConfig, load_env
from occubench.fidelity import WRITE_PROBE, TwinAudit, twin_audit, write_probe
from occubench.scripted._flawed import DRIFT_AFTER
from occubench.simulator import StateMode
from occubench.twins import (
    Feeding,
    Outcome,
    Twin,
    TwinCall,
    TwinFidelity,
    TwinTrajectory,
    first_drifts,
    load_twins,
    package_twins,
    read_trajectories,
    summarise,
    trajectories_json,
)
from twin_fixtures import ENV, write_counters

TRIAGE = "ref_emergency_department_triage"


def _run(dataset: str | Path = "reference", **settings: object) -> ResolvedRun:
    return ResolvedRun.of(RunConfig.model_validate({"dataset": str(dataset), **settings}))


def _record(audit: TwinAudit, simulator: str, feeding: Feeding = Feeding.TWIN) -> TwinFidelity:
    return next(r for r in audit.records if r.simulator == simulator and r.feeding is feeding)


def _total(record: TwinFidelity, field: str) -> int:
    return sum(int(getattr(s, field)) for s in record.steps)


def _other(record: TwinFidelity) -> int:
    return sum(s.determined - s.determined_matched - s.missing for s in record.steps)


@pytest.fixture(scope="module")
def reference_audit() -> TwinAudit:
    names = [
        "canned",
        "fabricating",
        "omitting",
        "inconsistent",
        "rule-inventing",
        "off-schema",
        "drifting",
    ]
    models = [named_model(f"occubench/{n}") for n in names]
    return twin_audit(_run(), models, free_running=True)


def test_the_canned_simulator_agrees_with_the_triage_twin(reference_audit: TwinAudit) -> None:
    canned = summarise(_record(reference_audit, "occubench/canned"))
    assert TRIAGE in canned.environments
    assert canned.steps > 0 and (canned.outcome, canned.determined) == (1.0, 1.0)
    assert canned.state is None and canned.failures == 0  # history mode: no state to compare
    own = _record(reference_audit, "occubench/canned", Feeding.OWN)
    assert summarise(own).first_drift is None and set(first_drifts(own).values()) == {None}
    # every env of the suite without a package twin is skipped, by name
    assert set(reference_audit.skipped) == {
        e for e in _run().config.load_tasks().envs if e not in package_twins()
    }


def test_each_flawed_simulator_shows_its_flaw_in_its_own_column(
    reference_audit: TwinAudit,
) -> None:
    record = {r.simulator.removeprefix("occubench/"): r for r in reference_audit.records}
    canned = record["canned"]
    assert (_total(canned, "missing"), _total(canned, "extra"), _other(canned)) == (0, 0, 0)
    fabricating = record["fabricating"]  # invents a record, answers unknown ids with data
    assert summarise(fabricating).outcome < 1 and _total(fabricating, "extra") > 0
    omitting = record["omitting"]  # drops the last record of a list
    assert _total(omitting, "missing") > 0 and _total(omitting, "extra") == 0
    assert summarise(omitting).outcome == 1 and _other(omitting) == 0
    rule = record["rule-inventing"]  # a policy appended to a text: a value that differs
    assert _other(rule) > 0 and _total(rule, "missing") == _total(rule, "extra") == 0
    inconsistent = record["inconsistent"]  # repeated reads shift numbers
    changed = [s for s in inconsistent.steps if s.determined_matched < s.determined]
    assert changed and _total(inconsistent, "missing") == _total(inconsistent, "extra") == 0
    assert all(s.step > 0 for s in changed)  # only repeats differ, never the first answer
    off = summarise(record["off-schema"])  # a generic envelope: nothing determined matches
    assert off.determined == 0 and _total(record["off-schema"], "extra") > 0
    drifting = _record(reference_audit, "occubench/drifting", Feeding.OWN)
    assert summarise(drifting).first_drift == DRIFT_AFTER
    assert all(s.determined_matched == s.determined for s in drifting.steps[:DRIFT_AFTER])


def test_a_forgotten_write_shows_in_the_state_and_the_first_drift(tmp_path: Path) -> None:
    data, twins = write_counters(tmp_path)
    run = _run(data, state_mode=StateMode.EXPLICIT, twins=str(twins))
    audit = twin_audit(run, [named_model("occubench/canned")], free_running=True)
    assert audit.skipped == [] and audit.records[0].environments == [ENV]
    writes = next(t for t in audit.trajectories if t.name == WRITE_PROBE)
    assert [c.tool for c in writes.calls] == ["close_counter", "get_counter"]
    for feeding in Feeding:
        record = _record(audit, "occubench/canned", feeding)
        steps = [s for s in record.steps if s.trajectory == WRITE_PROBE]
        close, read = steps
        # the close answers right and changes one field, but the patch forgets it
        assert close.fields_changed == 1 and close.outcome_match
        assert close.determined_matched == close.determined
        assert close.state_fields == 2 and close.state_matched == 1
        # fed the twin's state, the read's state is right; its own state still forgets
        assert read.state_matched == (2 if feeding is Feeding.TWIN else 1)
        assert read.determined_matched == read.determined - 1  # "open" again
        summary = summarise(record)
        assert summary.state is not None and summary.state < 1
    own = _record(audit, "occubench/canned", Feeding.OWN)
    assert first_drifts(own)[(ENV, WRITE_PROBE)] == 0
    assert summarise(own).first_drift == 0


def test_the_twin_history_is_what_the_simulator_is_fed(tmp_path: Path) -> None:
    """History mode: the read after the close is asked with the twin's answers before it."""
    data, twins = write_counters(tmp_path)
    audit = twin_audit(_run(data, twins=str(twins)), [named_model("occubench/canned")])
    (record,) = audit.records
    read = next(s for s in record.steps if s.trajectory == WRITE_PROBE and s.step == 1)
    assert read.state_fields is None and read.outcome_match
    assert read.determined - read.determined_matched == 1  # canned forgot the close


class _Failing(Model):
    """A simulator whose provider fails every call."""

    async def generate(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        raise ConnectionError("the provider is down")


def test_infra_failures_are_counted_apart_never_as_mismatches() -> None:
    unparseable = get_model("occubench/replay", outputs=["no observation here"])
    broken = _Failing(get_model("occubench/canned").api, GenerateConfig())
    audit = twin_audit(_run(), [unparseable, broken], free_running=True)
    for record in audit.records:
        summary = summarise(record)
        assert summary.failures == summary.steps > 0
        assert (summary.outcome, summary.determined, summary.first_drift) == (None, None, None)
        assert all(s.outcome_match is None and s.determined == 0 for s in record.steps)
    reasons = {r.simulator: r.steps[0].failure or "" for r in audit.records}
    assert reasons["occubench/replay"].startswith("unusable reply")
    assert "ConnectionError: the provider is down" in reasons[str(broken)]


def test_a_negative_tolerance_and_an_env_without_any_twin_are_user_errors(tmp_path: Path) -> None:
    from occubench.errors import UsageError

    with pytest.raises(UsageError, match="tolerance"):
        twin_audit(_run(), [named_model("occubench/canned")], tolerance=-1)
    data, _ = write_counters(tmp_path)
    with pytest.raises(UsageError, match="no environment of the selection has a twin"):
        twin_audit(_run(data), [named_model("occubench/canned")])


def _counters(tmp_path: Path, counters: int) -> tuple[ResolvedRun, EnvConfig, Twin, Path]:
    data, twins = write_counters(tmp_path, counters=counters)
    env = load_env(data, ENV)
    run = _run(data, state_mode=StateMode.EXPLICIT, twins=str(twins))
    return run, env, load_twins(twins)[ENV](env), twins


def test_the_write_probe_strings_every_write_the_twin_accepts_with_the_reads_it_changes(
    tmp_path: Path,
) -> None:
    _, env, twin, _ = _counters(tmp_path, 3)
    probe = write_probe(env, [], twin)
    assert probe is not None and probe.name == WRITE_PROBE
    closed = [("close_counter", c) for c in ("C-1", "C-2", "C-3")]
    read = [("get_counter", c) for c in ("C-1", "C-2", "C-3")]
    expected = [call for pair in zip(closed, read, strict=True) for call in pair]
    assert [(c.tool, c.arguments["counter_id"]) for c in probe.calls] == expected
    # each write is answered on the state the earlier ones left: all succeed in order
    steps = twin.run((c.tool, c.arguments) for c in probe.calls)
    assert {s.outcome for s in steps} == {Outcome.SUCCESS}
    assert [len(s.changes) for s in steps] == [1, 0] * 3
    # bounded: at most max_writes writes and reads_per_write reads after each
    short = write_probe(env, [], twin, max_writes=2, reads_per_write=0)
    assert short is not None
    assert [(c.tool, c.arguments["counter_id"]) for c in short.calls] == closed[:2]
    assert twin.state == env.task_initial_state  # the probe leaves the twin reset


def test_the_forgetful_simulator_drifts_at_its_second_write(tmp_path: Path) -> None:
    run, _, _, twins = _counters(tmp_path, 3)
    models = [get_model(f"occubench/{name}", twins=str(twins)) for name in ("twin", "forgetful")]
    audit = twin_audit(run, models, free_running=True)
    for feeding in Feeding:
        right = _record(audit, "occubench/twin", feeding)
        assert set(first_drifts(right).values()) == {None} and summarise(right).state == 1.0
    own = _record(audit, "occubench/forgetful", Feeding.OWN)
    steps = [s for s in own.steps if s.trajectory == WRITE_PROBE]
    assert first_drifts(own)[(ENV, WRITE_PROBE)] == 2  # the second close: its change dropped
    forgotten, reread = steps[2], steps[3]
    assert forgotten.outcome_match and forgotten.determined_matched == forgotten.determined
    assert forgotten.state_matched == forgotten.state_fields - 1  # looks right, state drifts
    assert reread.determined_matched == reread.determined - 1  # C-2 reads open again
    assert all(s.state_matched == s.state_fields - 1 for s in steps[2:])  # never recovered
    fed = _record(audit, "occubench/forgetful", Feeding.TWIN)
    assert summarise(fed).state is not None and summarise(fed).state < 1


def test_a_trajectories_file_replays_and_names_what_it_cannot(tmp_path: Path) -> None:
    run, _, _, _ = _counters(tmp_path, 2)
    given = [
        TwinTrajectory(
            environment=ENV,
            name="mine",
            calls=[
                TwinCall(tool="close_counter", arguments={"counter_id": "C-2"}),
                TwinCall(tool="get_counter", arguments={"counter_id": "C-2"}),
            ],
        ),
        TwinTrajectory(environment="env_elsewhere", name="theirs", calls=[]),
    ]
    path = tmp_path / "mine.json"
    path.write_bytes(trajectories_json(given))
    assert read_trajectories(path) == given
    audit = twin_audit(run, [named_model("occubench/canned")], trajectories=[path], probes=False)
    assert [t.name for t in audit.trajectories] == ["mine"]
    (record,) = audit.records
    assert [(s.trajectory, s.tool, s.fields_changed) for s in record.steps] == [
        ("mine", "close_counter", 1),
        ("mine", "get_counter", 0),
    ]
    assert audit.skipped == ["env_elsewhere"]  # no twin of it anywhere
    elsewhere = given[1].model_copy(update={"environment": TRIAGE})
    path.write_bytes(trajectories_json([given[0], elsewhere]))
    audit = twin_audit(run, [named_model("occubench/canned")], trajectories=[path], probes=False)
    assert audit.skipped == [] and audit.notes == [
        f"{path} trajectory 'theirs': environment {TRIAGE} has a twin but is not in the selection"
    ]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"environment": "x"}', "not a list of trajectories: "),
        ('[{"environment": "x", "name": "n", "calls": [{"tool": 3}]}]', "0.calls.0.tool"),
        ('[{"environment": "x", "name": "n", "calls": [], "extra": 1}]', "0.extra"),
        ("[" * 200 + "]" * 200, "nests deeper than"),
        ("[", "not a list of trajectories"),
    ],
)
def test_a_bad_trajectories_file_is_one_line_naming_the_file_and_field(
    tmp_path: Path, text: str, says: str
) -> None:
    from occubench.errors import UsageError

    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(UsageError) as raised:
        read_trajectories(path)
    message = str(raised.value)
    assert message.startswith(f"{path}: ") and says in message and "\n" not in message
    bound = len(text) - 1
    with pytest.raises(UsageError, match=f"{len(text)} bytes, more than the {bound} allowed"):
        read_trajectories(path, max_bytes=bound)
    with pytest.raises(UsageError, match="cannot be read"):
        read_trajectories(tmp_path / "absent.json")

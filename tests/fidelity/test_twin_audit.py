"""Step fidelity against the twin: each flaw in its column, a forgotten write, failures apart."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.model import GenerateConfig, Model, get_model

from occubench.calls import named_model
from occubench.config import ResolvedRun, RunConfig
from occubench.fidelity import WRITE_PROBE, TwinAudit, twin_audit
from occubench.scripted._flawed import DRIFT_AFTER
from occubench.simulator import StateMode
from occubench.twins import Feeding, TwinFidelity, first_drifts, package_twins, summarise
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

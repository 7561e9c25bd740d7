"""The record of a simulator against twins, and its summary."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.errors import UsageError
from occubench.twins import (
    Feeding,
    StepMatch,
    TwinFidelity,
    first_drifts,
    read_fidelity,
    summaries,
    summarise,
    write_fidelity,
)


def _step(index: int, **fields: object) -> StepMatch:
    base: dict[str, object] = {
        "environment": "e",
        "trajectory": "t",
        "step": index,
        "tool": "x",
        "fields_changed": 0,
        "outcome_match": True,
        "determined": 2,
        "determined_matched": 2,
    }
    base.update(fields)
    return StepMatch.model_validate(base)


def _failed(index: int, failure: str) -> StepMatch:
    """A step the simulator never answered (an infra failure): nothing of it compared."""
    return _step(index, outcome_match=None, determined=0, determined_matched=0, failure=failure)


def _record(feeding: Feeding, steps: list[StepMatch], tolerance: float = 0.0) -> TwinFidelity:
    """Simulator ``s``'s record on environment ``e``."""
    return TwinFidelity(
        simulator="s", feeding=feeding, tolerance=tolerance, environments=["e"], steps=steps
    )


def test_the_summary_shares_count_steps_fields_and_state() -> None:
    record = _record(
        Feeding.TWIN,
        [
            _step(0),
            _step(1, outcome_match=False, determined_matched=0, missing=2),
            _failed(2, "timeout"),
            _step(3, state_fields=4, state_matched=3, fields_changed=1),
        ],
    )
    summary = summarise(record)
    # the infra failure (step 2) is counted apart, in no share
    assert (summary.steps, summary.outcome, summary.determined) == (4, 2 / 3, 4 / 6)
    assert summary.state == 0.75 and summary.first_drift is None and summary.failures == 1
    again = TwinFidelity.model_validate_json(record.model_dump_json())
    assert summarise(again) == summary


def test_a_free_running_record_names_its_first_drift_and_feeds_merge() -> None:
    own = _record(
        Feeding.OWN, [_step(0), _failed(1, "busy"), _step(2, state_fields=2, state_matched=1)]
    )
    assert summarise(own).first_drift == 2 and summarise(own).state == 0.5
    assert first_drifts(own) == {("e", "t"): 2}
    fed = own.model_copy(update={"feeding": Feeding.TWIN, "environments": ["f"]})
    merged = summaries([own, fed, fed])
    assert list(merged) == ["s"] and merged["s"].steps == 6 and merged["s"].first_drift is None
    assert merged["s"].environments == ["f"]


def test_records_read_back_and_bad_files_are_one_clear_error(tmp_path: Path) -> None:
    record = _record(Feeding.TWIN, [_step(0)], tolerance=0.01)
    path = tmp_path / "twin.json"
    write_fidelity(path, [record, record])
    assert read_fidelity(path) == [record, record]
    (tmp_path / "bad.json").write_text('[{"simulator": "s"}]')
    with pytest.raises(UsageError, match=r"bad.json: not twin-fidelity records: 0\.feeding"):
        read_fidelity(tmp_path / "bad.json")
    (tmp_path / "deep.json").write_text("[" * 500 + "]" * 500)
    with pytest.raises(UsageError, match="deeper"):
        read_fidelity(tmp_path / "deep.json")
    with pytest.raises(UsageError, match="more than the 10 allowed"):
        read_fidelity(path, max_bytes=10)
    with pytest.raises(UsageError, match="cannot be read"):
        read_fidelity(tmp_path / "absent.json")

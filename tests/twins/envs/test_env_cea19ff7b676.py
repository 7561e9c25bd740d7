"""The audio mixing session twin: shapes, errors, gain changes and the calibration task."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from occubench.twins import ChangeKind, FieldKind, Outcome, Twin
from occubench.twins.envs.env_cea19ff7b676 import AudioMixingTwin
from twin_envs import assert_fits, sample_twin, successes

READS: list[tuple[str, dict[str, Any]]] = [
    ("get_session_inventory", {}),
    ("get_signal_routing", {"entity_id": "vocal_bus_01"}),
    ("get_signal_routing", {"entity_id": "master_bus"}),
    ("get_plugin_architecture", {"bus_id": "vocal_bus_01"}),
    ("get_plugin_architecture", {"bus_id": "vocal_bus_archive"}),
    ("get_metering_data", {"entity_id": "master_bus"}),
    ("get_metering_data", {"entity_id": "vox_lead_dry_v2"}),
]

# Task 32: find the bus that feeds the Master Bus, read its chain, and bring the Master
# Bus true peak from 2.8 to -4.0 dBFS by -6.8 dB on each active source of that bus.
CALIBRATION_PLAN: list[tuple[str, dict[str, Any]]] = [
    ("get_session_inventory", {}),
    ("get_signal_routing", {"entity_id": "master_bus"}),
    ("get_signal_routing", {"entity_id": "vocal_bus_01"}),
    ("get_plugin_architecture", {"bus_id": "vocal_bus_01"}),
    ("get_metering_data", {"entity_id": "master_bus"}),
    ("get_metering_data", {"entity_id": "vocal_bus_01"}),
    ("adjust_track_gain", {"track_id": "vox_lead_dry_v2", "gain_change_db": -6.8}),
    ("adjust_track_gain", {"track_id": "vox_dub_L_final", "gain_change_db": -6.8}),
    ("adjust_track_gain", {"track_id": "vox_dub_R_final", "gain_change_db": -6.8}),
    ("get_metering_data", {"entity_id": "vocal_bus_01"}),
    ("get_metering_data", {"entity_id": "master_bus"}),
]


@pytest.fixture
def twin(public_sample: Path) -> Twin:
    return sample_twin(public_sample, AudioMixingTwin)


def test_every_read_fits_its_example_output(twin: Twin) -> None:
    for name, arguments in READS:
        step = assert_fits(twin, twin.call(name, arguments))
        assert not step.changes
    routing = twin.call("get_signal_routing", {"entity_id": "vocal_bus_01"}).observation
    assert routing == {
        "destination_id": "master_bus",
        "source_ids": [
            "vox_lead_dry_v2",
            "vox_lead_dry_v2_dup",
            "vox_dub_L_final",
            "vox_dub_R_final",
        ],
    }
    meters = twin.call("get_metering_data", {"entity_id": "master_bus"})
    assert meters.marking() == {
        "/rms": FieldKind.DETERMINED,
        "/peak": FieldKind.DETERMINED,
        "/true_peak": FieldKind.FREE,
    }


def test_inventory_marks_what_the_state_leaves_open(twin: Twin) -> None:
    step = twin.call("get_session_inventory", {})
    items = {item["id"]: item for item in step.observation["items"]}
    assert items["vox_lead_dry_v2_dup"]["is_active"] is False
    assert items["master_bus"]["fader_db"] == 0.0
    marking = step.marking()
    ids = [item["id"] for item in step.observation["items"]]
    archive = ids.index("vocal_bus_archive")
    assert marking[f"/items/{archive}/is_active"] is FieldKind.FREE
    assert marking[f"/items/{ids.index('vocal_bus_01')}/is_active"] is FieldKind.DETERMINED
    assert marking[f"/items/{ids.index('master_bus')}/name"] is FieldKind.FREE


def test_unknown_ids_get_the_configs_error(twin: Twin) -> None:
    for name, key in (
        ("get_signal_routing", "entity_id"),
        ("get_plugin_architecture", "bus_id"),
        ("get_metering_data", "entity_id"),
        ("adjust_track_gain", "track_id"),
    ):
        arguments: dict[str, Any] = {key: "drum_bus"}
        if name == "adjust_track_gain":
            arguments["gain_change_db"] = 1.0
        step = twin.call(name, arguments)
        assert step.outcome is Outcome.ERROR
        assert step.observation == {"status": "error", "message": "Track ID 'drum_bus' not found"}
        assert step.marking()["/message"] is FieldKind.DETERMINED
    wrong_kind = twin.call("adjust_track_gain", {"track_id": "vocal_bus_01", "gain_change_db": 1})
    assert wrong_kind.outcome is Outcome.ERROR and not wrong_kind.changes
    assert twin.call("get_plugin_architecture", {"bus_id": "vox_lead_dry_v2"}).outcome is (
        Outcome.ERROR
    )
    assert twin.call("mute_track", {}).outcome is Outcome.ERROR
    assert twin.state == twin.env.task_initial_state


def test_a_gain_change_moves_the_track_and_what_it_feeds(twin: Twin) -> None:
    step = assert_fits(
        twin, twin.call("adjust_track_gain", {"track_id": "vox_lead_dry_v1", "gain_change_db": 2})
    )
    assert step.marking() == dict.fromkeys(step.marking(), FieldKind.FREE)
    assert [(c.path, c.kind, c.before, c.after) for c in step.changes] == [
        ("/tracks/0/peak_dbfs", ChangeKind.CHANGED, -10.0, -8.0),
        ("/tracks/0/rms_dbfs", ChangeKind.CHANGED, -22.0, -20.0),
        ("/tracks/5/peak_dbfs", ChangeKind.CHANGED, -20.0, -18.0),
        ("/tracks/5/rms_dbfs", ChangeKind.CHANGED, -32.0, -30.0),
    ]
    silent = assert_fits(
        twin,
        twin.call("adjust_track_gain", {"track_id": "vox_lead_dry_v2_dup", "gain_change_db": 3}),
    )
    assert [c.path for c in silent.changes] == ["/tracks/2/peak_dbfs", "/tracks/2/rms_dbfs"]
    one = assert_fits(
        twin, twin.call("adjust_track_gain", {"track_id": "vox_dub_L_final", "gain_change_db": -3})
    )
    assert {c.path for c in one.changes} >= {
        "/tracks/3/rms_dbfs",
        "/tracks/6/rms_dbfs",
        "/master_bus/peak_dbfs",
    }
    assert all(c.path.rsplit("/", 1)[-1] != "fader_db" for c in one.changes)
    uneven = twin.call("get_metering_data", {"entity_id": "vocal_bus_01"})
    assert set(uneven.free) == {"/rms", "/peak", "/true_peak"}


def test_the_reference_plan_solves_the_calibration_task(twin: Twin) -> None:
    steps = successes(twin, CALIBRATION_PLAN)
    masters = twin.call("get_signal_routing", {"entity_id": "master_bus"}).observation
    assert "vocal_bus_01" in masters["source_ids"]
    assert steps[3].observation["architecture"] == "analog-modeled"
    assert steps[3].marking()["/architecture"] is FieldKind.DETERMINED
    adjusted = {s.arguments["track_id"] for s in steps if s.tool == "adjust_track_gain"}
    assert adjusted <= set(steps[2].observation["source_ids"])
    final_master = steps[-1]
    assert final_master.observation["true_peak"] == -4.0
    assert final_master.observation["peak"] == -4.0
    assert final_master.marking()["/peak"] is FieldKind.DETERMINED
    assert steps[-2].observation["rms"] == -11.3  # the -18 dBFS bus target is out of reach
    faders = {t["track_id"]: t["fader_db"] for t in twin.state["tracks"]}
    assert faders["vocal_bus_01"] == 0.0 and twin.state["master_bus"]["volume_db"] == 0.0
    assert twin.state["master_bus"]["is_clipped"] is False
    assert all(
        c.path.rsplit("/", 1)[-1] not in ("fader_db", "volume_db") for s in steps for c in s.changes
    )
    assert twin.state["transport"] == twin.env.task_initial_state["transport"]


def test_levels_the_summing_model_chose_are_free_state_until_the_moves_are_even(
    twin: Twin,
) -> None:
    bus = "vocal_bus_01"
    sources = [t["track_id"] for t in twin.state["tracks"] if t["routing"] == bus]
    first = twin.call("adjust_track_gain", {"track_id": sources[0], "gain_change_db": -3.0})
    index = next(i for i, t in enumerate(twin.state["tracks"]) if t["track_id"] == bus)
    if len(sources) > 1:  # one source moved, the others not: the bus level is the model's
        assert first.free_state == [
            *(f"/master_bus/{field}" for field in ("is_clipped", "peak_dbfs", "rms_dbfs")),
            *(f"/tracks/{index}/{field}" for field in ("peak_dbfs", "rms_dbfs")),
        ]  # the moved track's own meters are the config's dB arithmetic
    for source in sources[1:]:
        last = twin.call("adjust_track_gain", {"track_id": source, "gain_change_db": -3.0})
    if len(sources) > 1:
        assert f"/tracks/{index}/rms_dbfs" not in last.free_state  # every source moved alike

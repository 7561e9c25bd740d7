"""Which audit ``occubench audit`` runs, and the folder a probe audit resumes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from occubench.config import RunConfig
from occubench.errors import UsageError
from occubench.fidelity import AuditKind, AuditWorld, ProbeSettings, audit_kind, audit_world

WORLD = AuditWorld(path="/w")


def test_the_options_choose_the_audit():
    assert audit_kind(twin=False, gold=None, world=None) is AuditKind.PROBES
    assert audit_kind(twin=False, gold=None, world=WORLD) is AuditKind.PROBES
    assert audit_kind(twin=False, gold=Path("g"), world=None) is AuditKind.GOLD
    assert audit_kind(twin=True, gold=None, world=None, twins="t") is AuditKind.TWIN


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (dict(twin=True, gold=Path("g"), world=None), "leave out --gold and --world"),
        (dict(twin=True, gold=None, world=WORLD), "leave out --gold and --world"),
        (dict(twin=False, gold=None, world=None, twins="t"), "go with --twin"),
        (dict(twin=False, gold=None, world=None, free_running=True), "go with --twin"),
        (dict(twin=False, gold=None, world=None, trajectories=[Path("t")]), "go with --twin"),
        (dict(twin=False, gold=Path("g"), world=WORLD), "replays the gold world itself"),
    ],
)
def test_options_of_another_audit_are_refused(options, message):
    with pytest.raises(UsageError, match=message):
        audit_kind(**options)


def test_the_world_of_a_configuration_has_its_path_resolved(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert audit_world(RunConfig()) is None
    world = audit_world(RunConfig(world="w", world_mode="replay", world_variant=2))
    assert world == AuditWorld(path=str(tmp_path / "w"), mode="replay", variant=2)


def test_the_log_folder_names_what_the_audit_computes():
    settings = ProbeSettings(rule_checks=3)
    folder = settings.default_log_dir(["a/sim", None], "/data", None)
    assert folder.startswith("logs/occubench-audit-")
    assert settings.default_log_dir(["a/sim", None], "/data", None) == folder
    assert ProbeSettings(rule_checks=4).default_log_dir(["a/sim", None], "/data", None) != folder
    assert settings.default_log_dir(["a/sim", None], "/data", WORLD) != folder

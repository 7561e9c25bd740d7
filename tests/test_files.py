"""Files written for a person (``occubench.files``) and the play link written with it."""

from __future__ import annotations

import os
import stat

import pytest
import typer

from occubench.cli.play import _write_link
from occubench.errors import UsageError
from occubench.files import refuse_foreign, write_fresh

LINK = "http://127.0.0.1:1/start?key=secret"


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_an_existing_file_is_replaced_with_the_mode_asked(tmp_path):
    path = tmp_path / "link.txt"
    path.write_text("old")
    path.chmod(0o644)  # readable by every user
    _write_link(path, LINK)
    assert path.read_text() == LINK + "\n" and mode(path) == 0o600


def test_a_link_is_replaced_never_followed(tmp_path):
    target = tmp_path / "precious"
    target.write_text("keep me")
    path = tmp_path / "link.txt"
    path.symlink_to(target)
    _write_link(path, LINK)
    assert target.read_text() == "keep me"
    assert not path.is_symlink() and path.read_text() == LINK + "\n" and mode(path) == 0o600


def test_a_file_that_cannot_be_written_is_one_line_and_leaves_nothing(tmp_path):
    with pytest.raises(typer.Exit) as stopped:
        _write_link(tmp_path / "missing" / "link.txt", LINK)
    assert stopped.value.exit_code == 2
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_file_whole(tmp_path, monkeypatch):
    path = tmp_path / "index.html"
    path.write_text("the old page")

    def full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(OSError):
        write_fresh(path, "the new page")
    assert path.read_text() == "the old page"
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]  # no partial file left


def test_files_a_command_did_not_write_are_refused_unless_forced(tmp_path):
    (tmp_path / "index.html").write_text("the user's own page")
    with pytest.raises(UsageError, match="index.html.*--force"):
        refuse_foreign(tmp_path, ["index.html", "data.json"], ours=False, force=False)
    refuse_foreign(tmp_path, ["index.html"], ours=True, force=False)
    refuse_foreign(tmp_path, ["index.html"], ours=False, force=True)
    refuse_foreign(tmp_path, ["other.html"], ours=False, force=False)

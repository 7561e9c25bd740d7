"""Logs under the paths a command is given: at least one, or one clear message."""

from __future__ import annotations

import re

import pytest

from occubench.errors import UsageError
from occubench.results import some_log_files


def test_paths_without_a_log_are_named_in_the_message(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    message = re.escape(f"no logs in {tmp_path / 'a'}, {tmp_path / 'b'}")
    with pytest.raises(UsageError, match=f"^{message}$"):
        some_log_files([tmp_path / "a", str(tmp_path / "b")])


def test_a_log_given_by_name_is_listed(tmp_path):
    log = tmp_path / "run.eval"
    log.write_bytes(b"")
    assert some_log_files([log]) == [str(log)]

"""What an agent program's environment can hold: the rule, checked against the kernel.

The end-to-end behaviour (daemons found and killed, reading bounded, the instruction in
its file) is in ``test_agent_command.py``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from occubench.serving._processes import ENVIRONMENT_STRING_BYTES, fits_in_environment

NAME = "OCCUBENCH_INSTRUCTION"
LONGEST = ENVIRONMENT_STRING_BYTES - len(NAME) - 2  # "NAME=" + value + the final NUL


def test_ordinary_text_fits_and_a_nul_byte_never_does():
    assert fits_in_environment(NAME, "Check the methane readings at N4-S2. Ünïcode ✓")
    assert not fits_in_environment(NAME, "before\0after")
    assert not fits_in_environment(NAME, "half of an emoji: \ud83d")  # cannot be encoded


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or os.sysconf("SC_PAGE_SIZE") != 4096,
    reason="the limit on one string is Linux's with 4 KiB pages",
)
def test_the_limit_on_one_string_is_the_kernels():
    assert fits_in_environment(NAME, "x" * LONGEST)
    assert not fits_in_environment(NAME, "x" * (LONGEST + 1))
    subprocess.run(["true"], env={NAME: "x" * LONGEST}, check=True)  # the kernel takes it
    with pytest.raises(OSError, match="Argument list too long"):
        subprocess.run(["true"], env={NAME: "x" * (LONGEST + 1)}, check=True)


def test_the_inherited_environment_and_the_variable_take_at_most_half_of_arg_max(monkeypatch):
    inherited = sum(len(k) + len(v) + 2 for k, v in os.environb.items())
    room = 10_000  # what half of ARG_MAX leaves beside this process's environment
    monkeypatch.setattr(os, "sysconf", lambda name: 2 * (inherited + room))
    assert fits_in_environment(NAME, "x" * (room - len(NAME) - 2))
    assert not fits_in_environment(NAME, "x" * (room - len(NAME) - 1))

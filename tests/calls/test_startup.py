"""Inspect's hooks banner stays off the output of occubench's commands and library calls."""

import subprocess
import sys

import pytest

BUILD = "from occubench.calls import named_model; named_model('occubench/canned')"
AUDIT = ["-m", "occubench", "audit", "--dataset", "reference"]
AUDIT += ["--simulator-model", "occubench/canned", "--log-dir", "logs"]


@pytest.mark.parametrize("args", [["-c", BUILD], AUDIT], ids=["library", "audit"])
def test_no_banner(tmp_path, args):
    done = subprocess.run(
        [sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "hooks enabled" not in done.stdout + done.stderr


def test_the_banner_is_inspects_own_when_a_model_is_built_bare(tmp_path):
    # the check above can fail: Inspect prints it for a model built without occubench
    bare = "from inspect_ai.model import get_model; get_model('occubench/canned')"
    done = subprocess.run(
        [sys.executable, "-c", bare], cwd=tmp_path, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "hooks enabled" in done.stdout

"""`occubench run` starts its workers early: the CLI does not import what only reports need."""

import json
import subprocess
import sys

REPORT_ONLY = ("scipy", "matplotlib")


def test_cli_import_leaves_report_libraries_out():
    code = (
        "import json, sys; import occubench.cli; "
        f"print(json.dumps([m for m in {REPORT_ONLY!r} if m in sys.modules]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == []


def test_wilson_interval_needs_no_scipy():
    code = (
        "import sys; from occubench.report import summary_tables; "
        "from occubench.analysis._stats import wilson_interval; "
        "i = wilson_interval(81, 263); "
        "print(round(i.low, 4), round(i.high, 4), 'scipy' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0.2553", "0.3662", "False"]

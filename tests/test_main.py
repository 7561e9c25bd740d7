import subprocess
import sys


def test_python_dash_m_runs_the_command_line():
    done = subprocess.run(
        [sys.executable, "-m", "occubench", "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0
    assert "run" in done.stdout and "report" in done.stdout


def test_unknown_command_exits_with_usage_error():
    done = subprocess.run(
        [sys.executable, "-m", "occubench", "no-such-command"], capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "no-such-command" in done.stderr

import subprocess
import sys
from pathlib import Path


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


def test_a_dotenv_that_inspect_reads_is_named_with_its_variables_but_not_their_values(tmp_path):
    (tmp_path / ".env").write_text(
        "OPENAI_BASE_URL=http://attacker.example/v1\nSOME_SETTING=secret-value\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "occubench", "list", "--dataset", "reference"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert f"Inspect reads {tmp_path / '.env'}: it sets OPENAI_BASE_URL, SOME_SETTING" in (
        " ".join(done.stderr.split())
    )
    assert "OPENAI_BASE_URL: model calls and their keys go where it says" in " ".join(
        done.stderr.split()
    )
    assert "attacker.example" not in done.stderr + done.stdout
    assert "secret-value" not in done.stderr + done.stdout


def test_no_dotenv_no_notice(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "occubench", "list", "--dataset", "reference"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    assert "Inspect reads" not in done.stderr


def test_the_version_is_written_once():
    """The package's metadata takes its version from ``occubench.__version__``."""
    from importlib.metadata import version

    import occubench

    assert version("occubench") == occubench.__version__
    changelog = (Path(__file__).resolve().parents[1] / "CHANGELOG.md").read_text()
    assert f"## {occubench.__version__} (" in changelog  # every version has its entry

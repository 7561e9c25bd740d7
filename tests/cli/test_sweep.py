import pytest
import yaml
from typer.testing import CliRunner

from conftest import SAMPLE_DIR
from occubench.cli import _common, app

runner = CliRunner()


@pytest.fixture(autouse=True)
def wide_console():
    for console in (_common.console, _common.err_console):
        console.width = 200


def test_dry_run_prints_the_runs_and_their_count(monkeypatch):
    monkeypatch.delenv("OCCUBENCH_DATASET", raising=False)
    result = runner.invoke(app, ["sweep", "paper-*", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "185 runs (paper-cross-simulator 45, paper-fault-count 60" in result.output
    assert "Shards are dealt once the dataset is known" in result.output
    named = runner.invoke(
        app,
        [
            "sweep",
            "paper-robustness",
            "--dry-run",
            "--agents",
            "openai/a",
            "--simulators",
            "google/s",
            "--dataset",
            str(SAMPLE_DIR),
        ],
    )
    assert named.exit_code == 0, named.output
    assert "4 runs" in named.output and "4 shards" in named.output
    assert "openai/a" in named.output and "placeholder" not in named.output


def test_placeholders_must_be_replaced_before_running():
    result = runner.invoke(app, ["sweep", "paper-main", "--dataset", str(SAMPLE_DIR)])
    assert result.exit_code == 2
    assert "placeholder/agent-01" in result.output and "--agents" in result.output


def test_sweep_runs_every_run_and_reports(tmp_path):
    sweep = {
        "name": "tiny",
        "dataset": "reference",
        "with_plan": True,
        "agents": ["occubench/careful"],
        "simulators": ["occubench/canned"],
        "grid": {"env_mode": ["E0", "E3"]},
        "log_dir": str(tmp_path / "logs"),
    }
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(sweep))
    result = runner.invoke(app, ["sweep", str(path), "--workers", "2", "--display", "none"])
    assert result.exit_code == 0, result.output
    assert "2 runs, 2 shards" in result.output
    assert "Leaderboard" in result.output and "occubench/careful" in result.output
    runs = sorted(p.name for p in (tmp_path / "logs").iterdir())
    assert [name.rsplit("-", 1)[0] for name in runs] == [
        "occubench_careful__occubench_canned__E0",
        "occubench_careful__occubench_canned__E3-fc2-fd2-s0",
    ]
    assert all((tmp_path / "logs" / name / "shard-1-of-1").is_dir() for name in runs)

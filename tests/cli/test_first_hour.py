"""A new user's first hour: preflight, shared log folders, Inspect's spellings, exit codes."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.cli.run import generation_settings
from occubench.config import RunConfig
from occubench.errors import ExitCode
from occubench.roles import Role
from occubench.scale import RunSpec

runner = CliRunner()
OFFLINE = ["--dataset", "reference", "--with-plan", "--display", "none", "--workers", "1"]


@pytest.mark.parametrize(
    ("models", "env", "line"),
    [
        (
            ["--model", "openai/gpt-5", "--simulator-model", "occubench/canned"],
            {},
            "Preflight failed: agent model openai/gpt-5: no API key; set OPENAI_API_KEY",
        ),
        (
            ["--model", "occubench/careful", "--model-role", "simulator=nosuch/model"],
            {},
            "Preflight failed: simulator model nosuch/model: unknown model provider",
        ),
        (
            [
                "--model",
                "occubench/careful",
                "--simulator-model",
                "openai-api/local/canned",
                "--verifier-model",
                "openai-api/local/canned",
            ],
            {"LOCAL_API_KEY": "k", "LOCAL_BASE_URL": "http://127.0.0.1:9/v1"},
            "Preflight failed: simulator, verifier model openai-api/local/canned: the endpoint "
            "did not answer; check that it is up and LOCAL_BASE_URL",
        ),
    ],
    ids=["missing-key", "unknown-provider", "unreachable"],
)
def test_preflight_is_one_line_and_starts_nothing(tmp_path, monkeypatch, models, env, line):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", *models, *OFFLINE])
    assert result.exit_code == ExitCode.BAD_INPUT, result.output
    lines = [ln for ln in result.output.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith(line)  # the one line, nothing else
    assert "Traceback" not in result.output and "[bold]" not in result.output
    assert not (tmp_path / "logs").exists()  # no sample started, no log folder


def test_two_agents_share_a_log_folder_and_one_report(tmp_path):
    logs = tmp_path / "logs"
    for agent in ("careful", "no-retry"):
        result = runner.invoke(
            app,
            [
                "run",
                "--model",
                f"occubench/{agent}",
                "--model-role",
                "simulator=occubench/canned",
                *OFFLINE,
                "--limit",
                "3",
                "--env-mode",
                "e1",  # choices are case-insensitive
                "--protocol",  # faults placed by code: the scripted simulator places none
                "occubench",
                "--log-dir",
                str(logs),
            ],
        )
        assert result.exit_code == ExitCode.OK, result.output
    folders = sorted(p.name for p in logs.iterdir())
    assert len(folders) == 2
    assert folders[0].startswith("occubench_careful__occubench_canned__E1-")
    assert folders[1].startswith("occubench_no-retry__occubench_canned__E1-")
    report = runner.invoke(app, ["report", str(logs), "--resamples", "50"])
    assert report.exit_code == ExitCode.OK, report.output
    board = [line for line in report.output.splitlines() if "│ occubench/" in line]
    assert any("│ 1 │ occubench/careful" in line for line in board)
    assert any("│ 2 │ occubench/no-retry" in line for line in board)  # ranked together


def test_a_model_role_named_twice_or_unknown_is_bad_input(tmp_path):
    for extra, message in (
        (["--model-role", "judge=x/y"], "unknown role 'judge'"),
        (["--model-role", "simulator=a/b", "--simulator-model", "c/d"], "two models for"),
        ([], "no simulator model"),
    ):
        base = ["run", "--model", "occubench/careful", *OFFLINE, "--no-preflight"]
        result = runner.invoke(app, [*base, *extra])
        assert result.exit_code == ExitCode.BAD_INPUT, result.output
        assert message in result.output


def test_generation_settings_per_role():
    given = {
        "temperature": ["0.7", "simulator=0"],
        "reasoning_effort": ["HIGH"],
        "max_tokens": ["verifier=512", "2048"],
    }
    settings, max_tokens = generation_settings(given)
    assert {role: c.model_dump(exclude_unset=True) for role, c in settings.items()} == {
        Role.AGENT: {"temperature": 0.7, "reasoning_effort": "high"},
        Role.SIMULATOR: {"temperature": 0.0},
    }
    assert max_tokens == {"verifier_max_tokens": 512, "agent_max_tokens": 2048}
    spec = RunSpec(
        agent="a/b",
        roles={Role.SIMULATOR: "c/d"},
        config=RunConfig(),
        generate=settings,
        log_dir="x",
    )
    assert spec.generate_config(Role.SIMULATOR).temperature == 0.0
    assert spec.generate_config(Role.AGENT).reasoning_effort == "high"
    assert spec.generate_config(Role.VERIFIER).temperature is None
    for bad, message in (
        ({"temperature": ["judge=1"]}, "unknown role 'judge'"),
        ({"temperature": ["warm"]}, "not a number"),
        ({"reasoning_effort": ["extreme"]}, "agent:"),
        ({"max_tokens": ["simulator_fallback=5"]}, "has no max_tokens setting"),
    ):
        with pytest.raises(ValueError, match=message):
            generation_settings(
                {"temperature": None, "reasoning_effort": None, "max_tokens": None, **bad}
            )


def test_version_and_short_help():
    version = runner.invoke(app, ["--version"])
    assert version.exit_code == 0 and version.output.startswith("occubench ")
    short = runner.invoke(app, ["run", "-h"], terminal_width=80)
    assert short.exit_code == 0
    for name in ("--simulator-model", "--model-role", "--reasoning-effort", "--no-preflight"):
        assert name in short.output  # full option names at 80 columns
    assert "…" not in short.output


def test_tables_at_80_columns_fold_and_never_lose_a_cell():
    import io

    from rich.table import Table

    def printed(columns: int) -> str:
        table = Table(title="A wide leaderboard")
        table.add_column("agent")
        for i in range(columns):
            table.add_column(f"E{i} 95% CI", justify="right")
        table.add_row("openai-api/local/a-long-agent-name", *["[72.2, 100.0]"] * columns)
        out = io.StringIO()
        _common._Console(width=80, file=out).print(table)
        return out.getvalue()

    fits = printed(5)  # whole intervals do not fit: they fold at their space
    assert max(len(line) for line in fits.splitlines()) <= 80
    assert fits.count("[72.2,") == 5 and fits.count("100.0]") == 5 and "…" not in fits
    wide = printed(12)  # not even words fit: printed wider, never cropped
    assert wide.count("[72.2,") == 12 and wide.count("100.0]") == 12 and "…" not in wide


def test_a_signal_after_the_samples_finished_counts_them_as_kept(tmp_path, monkeypatch):
    from occubench.cli import run as run_command

    def stopped(*args, **kwargs):
        raise KeyboardInterrupt  # as a SIGTERM while the summary is read from the logs

    monkeypatch.setattr(run_command, "_summary", stopped)
    monkeypatch.chdir(tmp_path)
    args = ["run", "--model", "occubench/careful", "--model-role", "simulator=occubench/canned"]
    result = runner.invoke(app, [*args, *OFFLINE, "--limit", "2", "--no-preflight"])
    assert result.exit_code == ExitCode.INTERRUPTED, result.output
    assert "2 of 2 samples finished and are kept in logs/occubench_careful__" in result.output

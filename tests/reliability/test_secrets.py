"""Secrets: an API key in the environment reaches the provider and nothing else.

A run with a recognisable fake key (cached responses, realtime log, some samples
ending in provider errors) must leave it in no log (every member of the .eval zips),
no cache or Inspect data file, no report and no output.
"""

from __future__ import annotations

import base64
import gzip
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import yaml
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from occubench.cli import app
from occubench.errors import ExitCode
from occubench.results import read_runs
from occubench.testing import FailureKind, Flakiness, ScriptedOpenAIServer

FAKE_KEY = "sk-occubench-FAKE-0123456789abcdef0123456789abcdef"
ERRORS = Flakiness(rate=0.1, seed=12, kinds=[FailureKind.SERVER_ERROR], failures=100)
"""Some requests fail for good: their samples end in errors, whose messages are logged."""


def texts(root: Path):
    """(name, bytes) of every file under ``root``, unzipped and gunzipped too."""
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        yield str(path), data
        if data[:2] == b"\x1f\x8b":  # gzip (Inspect's trace logs)
            yield f"{path}!gunzip", gzip.decompress(data)
        if zipfile.is_zipfile(path):
            with zipfile.ZipFile(path) as z:
                for member in z.namelist():
                    yield f"{path}!{member}", z.read(member)


def leaks(root: Path) -> list[str]:
    return [name for name, data in texts(root) if FAKE_KEY.encode() in data]


def test_the_scan_reads_zip_members(tmp_path):
    with zipfile.ZipFile(tmp_path / "x.eval", "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("samples/1.json", f'{{"auth": "Bearer {FAKE_KEY}"}}')
    (tmp_path / "trace.log.gz").write_bytes(gzip.compress(FAKE_KEY.encode()))
    assert leaks(tmp_path) == [
        f"{tmp_path / 'trace.log.gz'}!gunzip",
        f"{tmp_path / 'x.eval'}!samples/1.json",
    ]


def test_a_fake_key_leaks_nowhere(release_dir, tmp_path, http_models):
    home = tmp_path / "home"  # Inspect's cache and data folders (traces, sample buffers)
    env = {
        **os.environ,
        "LOCAL_API_KEY": FAKE_KEY,
        "OPENAI_API_KEY": FAKE_KEY,
        "INSPECT_CACHE_DIR": str(home / "cache"),
        "XDG_CACHE_HOME": str(home / "xdg-cache"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
    }
    command = [
        str(Path(sys.executable).with_name("occubench")),
        "run",
        *http_models,
        "--dataset",
        str(release_dir),
        "--tasks",
        "11,24,26,32",
        "--protocol",
        "occubench",  # provider failures are errors (the paper's would grade them)
        "--display",
        "plain",
        "--workers",
        "1",
        "--cache",
        "--log-realtime",
        "--max-retries",
        "0",
        "--retry-on-error",
        "0",
        "--log-dir",
        str(tmp_path / "logs"),
    ]
    with ScriptedOpenAIServer(flaky=ERRORS) as server:
        run = subprocess.run(
            command,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            env={**env, "LOCAL_BASE_URL": server.base_url},
        )
        assert server.stats.saw_key(FAKE_KEY)  # the key did reach the provider
        failures = server.stats.snapshot()["failures"]
    assert run.returncode == ExitCode.SAMPLE_ERRORS, run.stdout + run.stderr
    assert failures and "infrastructure error" in run.stdout
    rows = read_runs([tmp_path / "logs"])
    errors = [r.error for r in rows if r.error]
    assert errors and all("500" in e or "InternalServerError" in e for e in errors)
    assert any(home.rglob("*")), "the run cached nothing: the cache check would be empty"

    report = CliRunner().invoke(
        app,
        ["report", str(tmp_path / "logs"), "--out", str(tmp_path / "report")],
        terminal_width=200,
    )
    assert report.exit_code == 0, report.output
    assert any((tmp_path / "report").iterdir())

    for text in (run.stdout, run.stderr, report.output, *errors):
        assert FAKE_KEY not in text
    assert leaks(tmp_path) == []
    print(f"\nscanned {sum(1 for _ in texts(tmp_path))} files and zip members")
    assert next((tmp_path / "logs").glob("*/*.eval"))  # logs/<the run's folder>/


URL_PASSWORD = "pw-USERINFO-0123456789abcdef"
QUERY_KEY = "qk-QUERYKEY-0123456789abcdef"
HEADER_KEY = "hk-HEADERKEY-0123456789abcdef"
ARG_KEY = "ak-MODELARG-0123456789abcdef"
BASIC = base64.b64encode(f"user:{URL_PASSWORD}".encode()).decode()
QUOTING = Flakiness(rate=0.2, seed=1, kinds=[FailureKind.AUTH_ERROR], failures=100)
"""Some requests get a 401 that quotes the credentials they carried, for good."""


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a child run: Inspect's data and cache folders under tmp_path."""
    home = tmp_path / "home"
    return {
        **os.environ,
        "INSPECT_CACHE_DIR": str(home / "cache"),
        "XDG_CACHE_HOME": str(home / "xdg-cache"),
        "XDG_DATA_HOME": str(home / "xdg-data"),
        **extra,
    }


def found(root: Path, secrets: list[str]) -> list[str]:
    return [name for name, data in texts(root) if any(s.encode() in data for s in secrets)]


def test_base_url_secrets_and_a_401_quoting_them_leak_nowhere(release_dir, tmp_path, http_models):
    """Userinfo and query keys in the base URL, two shards, a 401 quoting the credentials:
    no .eval member, logs.json, trace, report file or output holds them."""
    occubench = str(Path(sys.executable).with_name("occubench"))
    with ScriptedOpenAIServer(flaky=QUOTING) as server:
        host = server.base_url.split("//", 1)[1]
        url = f"http://user:{URL_PASSWORD}@{host}?api_key={QUERY_KEY}"
        env = isolated_env(tmp_path, LOCAL_BASE_URL=url, LOCAL_API_KEY=FAKE_KEY)
        run = subprocess.run(
            [occubench, "run", *http_models, "--dataset", str(release_dir), "--tasks",
             "11,24,26,32", "--display", "plain", "--workers", "2", "--protocol", "occubench",
             "--max-retries", "0", "--retry-on-error", "0", "--no-preflight",
             "--log-dir", str(tmp_path / "logs")],
            cwd=tmp_path, capture_output=True, text=True, env=env,
        )  # fmt: skip
        failures = server.stats.snapshot()["failures"]
    assert run.returncode == ExitCode.SAMPLE_ERRORS, run.stdout + run.stderr
    assert failures["auth_error"] > 0 and "infrastructure error" in run.stdout
    rows = read_runs([tmp_path / "logs"])
    errors = [r.error for r in rows if r.error]
    # userinfo in the URL makes the client send Basic credentials, which the 401 quotes
    assert errors and all("Incorrect API key provided: Basic [redacted]" in e for e in errors)
    header = next(p for p in (tmp_path / "logs").rglob("*.eval"))
    assert (
        "http://user:[redacted]@" in read_eval_log(str(header), header_only=True).model_dump_json()
    )
    assert any((tmp_path / "home" / "xdg-data").rglob("trace-*")), "no trace to check"

    report = subprocess.run(
        [occubench, "report", str(tmp_path / "logs"), "--out", str(tmp_path / "report")],
        cwd=tmp_path, capture_output=True, text=True, env=env,
    )  # fmt: skip
    assert report.returncode == 0, report.stdout + report.stderr
    secrets = [URL_PASSWORD, QUERY_KEY, BASIC, FAKE_KEY]
    assert found(tmp_path, secrets) == []
    outputs = run.stdout + run.stderr + report.stdout + report.stderr
    assert [s for s in secrets if s in outputs] == []


def test_sweep_header_secrets_leak_nowhere(release_dir, tmp_path):
    """A key in a sweep agent's generate.extra_headers: in no sample file, run name, log
    folder, report file, trace or output, while the provider still gets it."""
    sweep = {
        "name": "headers",
        "dataset": str(release_dir),
        "task_ids": [11, 24],
        "protocol": "occubench",
        "agents": [
            {
                "model": "openai-api/local/schema-agent",
                "generate": {"extra_headers": {"X-Api-Key": HEADER_KEY, "X-Trace": "on"}},
            }
        ],
        "simulators": ["openai-api/local/echo-simulator"],
        "verifiers": ["openai-api/local/scripted-judge"],
        "log_dir": str(tmp_path / "logs"),
    }
    path = tmp_path / "headers.yaml"
    path.write_text(yaml.safe_dump(sweep))
    with ScriptedOpenAIServer() as server:
        env = isolated_env(tmp_path, LOCAL_BASE_URL=server.base_url, LOCAL_API_KEY=FAKE_KEY)
        run = subprocess.run(
            [str(Path(sys.executable).with_name("occubench")), "sweep", str(path),
             "--workers", "1", "--display", "plain", "--out", str(tmp_path / "report")],
            cwd=tmp_path, capture_output=True, text=True, env=env,
        )  # fmt: skip
        assert server.stats.saw_key(HEADER_KEY)  # the header did reach the provider
    assert run.returncode == 0, run.stdout + run.stderr
    leaderboard = (tmp_path / "report" / "leaderboard.csv").read_text()
    assert "'X-Api-Key': '[redacted]'" in leaderboard and "'X-Trace': 'on'" in leaderboard
    for written in ("logs", "report", "home"):  # everything but the sweep file itself
        assert found(tmp_path / written, [HEADER_KEY, FAKE_KEY]) == []
    assert HEADER_KEY not in run.stdout + run.stderr
    assert not any(HEADER_KEY in str(p) for p in tmp_path.rglob("*"))  # nor in a path


def test_model_argument_secrets_are_redacted_from_the_header(release_dir, tmp_path):
    """A secret model argument and extra header of a model given to the runner."""
    from inspect_ai.model import GenerateConfig, get_model

    from occubench.config import EvalOptions, RunConfig
    from occubench.roles import Role
    from occubench.scale import BENCHMARK_TASK, run_eval

    agent = get_model(
        "occubench/schema-agent",
        memoize=False,
        auth_token=ARG_KEY,
        config=GenerateConfig(extra_headers={"Authorization": f"Bearer {HEADER_KEY}"}),
    )
    config = RunConfig(dataset=str(release_dir), task_ids=[11], protocol="occubench")
    outcome = run_eval(
        BENCHMARK_TASK,
        config.task_args(),
        log_dir=str(tmp_path / "logs"),
        model=agent,
        roles={
            Role.SIMULATOR: "occubench/echo-simulator",
            Role.VERIFIER: "occubench/scripted-judge",
        },
        options=EvalOptions(),
    )
    log = read_eval_log(outcome.logs[0])
    assert log.eval.model_args == {"auth_token": "[redacted]"}
    assert log.samples and log.samples[0].error is None
    assert found(tmp_path / "logs", [ARG_KEY, HEADER_KEY]) == []

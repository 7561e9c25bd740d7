import subprocess
import sys

import pytest

from conftest import RELEASE_IDS, run_task
from occubench.agent import episode_in


def test_all_sample_tasks_run_and_are_graded(tmp_path):
    log = run_task(tmp_path)
    assert log.status == "success"
    assert sorted(s.id for s in log.samples) == RELEASE_IDS
    assert all(s.error is None and s.scores["occubench_scorer"].value == "C" for s in log.samples)
    assert {s.metadata["industry"] for s in log.samples} >= {
        "Technology & IT",
        "Science & Research",
    }
    metrics = log.results.scores[0].metrics
    assert metrics["accuracy"].value == 1.0 and metrics["Technology & IT"].value == 1.0
    assert log.eval.task_version == "0.1.0"
    for sample in log.samples:
        assert sample.role_usage["simulator"].input_tokens > 0  # usage set offline
        episode = episode_in(sample.store)
        assert len(episode.steps) == episode.tool_calls > 0


def test_inspect_cli_entry_point(tmp_path):
    """`inspect eval occubench/occubench` resolves the task and the scripted models."""
    from conftest import RELEASE_DIR

    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "inspect_ai",
            "eval",
            "occubench/occubench",
            "--model",
            "occubench/schema-agent",
            "--model-role",
            "simulator=occubench/echo-simulator",
            "--model-role",
            "verifier=occubench/scripted-judge",
            "-T",
            f"dataset={RELEASE_DIR}",
            "-T",
            "task_ids=26,51",
            "--log-dir",
            str(tmp_path),
            "--display",
            "plain",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    from inspect_ai.log import list_eval_logs, read_eval_log

    (info,) = list_eval_logs(str(tmp_path))
    log = read_eval_log(info.name)
    assert log.status == "success" and sorted(s.id for s in log.samples) == [26, 51]


def test_an_unknown_task_parameter_is_refused(tmp_path):
    """Inspect hands a name that is no parameter on to the task, which refuses it."""
    from inspect_ai import eval as inspect_eval

    from occubench.errors import UsageError

    with pytest.raises(UsageError, match=r"no parameter env_mod \(did you mean env_mode\?\)"):
        inspect_eval(
            "occubench/occubench",
            model="occubench/schema-agent",
            task_args={"dataset": "reference", "env_mod": "E1"},
            display="none",
            log_dir=str(tmp_path),
        )

"""``occubench run`` on tasks with a user: the user model is required, its errors apart."""

from typer.testing import CliRunner

from conftest import SCRIPTED_MODEL_ARGS
from occubench.cli import app
from user_fixtures import user_dataset

runner = CliRunner()


def models(agent):
    args = list(SCRIPTED_MODEL_ARGS)
    args[args.index("--agent-model") + 1] = f"occubench/{agent}"
    return [*args, "--display", "none"]


def test_a_task_with_a_user_and_no_user_model_is_refused_naming_it(tmp_path):
    data = user_dataset(tmp_path / "data")
    args = ["run", *models("asking"), "--dataset", str(data), "--log-dir", str(tmp_path / "l")]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 2, result.output
    assert "1 task(s) have a simulated user" in result.output and ": 1;" in result.output
    assert "--user-model" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "l").exists()


def test_a_run_with_a_user_counts_its_errors_apart(tmp_path):
    data = user_dataset(tmp_path / "data")
    args = [
        "run",
        *models("asking"),
        "--user-model",
        "occubench/user-inventing",
        "--dataset",
        str(data),
        "--log-dir",
        str(tmp_path / "l"),
    ]
    result = runner.invoke(app, args, terminal_width=200)
    assert result.exit_code == 0, result.output
    assert "Simulated user" in result.output
    line = [s for s in result.output.splitlines() if "occubench/asking" in s][-1]
    # one sample, three turns; the first kept its invented figure (re-asked, it invented
    # again; later replies repeat it, said before); the user ended; the agent passed, and
    # without the samples its user erred in no sample is left
    assert [w for w in line.split() if w != "│"][-6:] == ["1", "3", "1", "1", "100.0", "-"]

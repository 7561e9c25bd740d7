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


def _conversational(tmp_path, agent, user):
    """The conversational suite's tasks 2001 (one fact) and 2006 (two), on their twins."""
    logs = tmp_path / agent / user
    args = ["run", *models(agent), "--user-model", f"occubench/{user}"]
    args += ["--simulator-model", "occubench/twin", "--dataset", "conversational"]
    args += ["--with-plan", "--protocol", "occubench", "--tasks", "2001,2006"]
    result = runner.invoke(app, [*args, "--log-dir", str(logs)], terminal_width=200)
    assert result.exit_code == 0, result.output
    from occubench.results import read_runs

    return sorted(read_runs([str(logs)], cache=False), key=lambda r: r.task_id)


def test_on_the_conversational_suite_the_asking_agent_passes_and_the_other_does_not(tmp_path):
    asked = _conversational(tmp_path, "asking", "user-cooperative")
    assert [(r.task_id, r.passed, r.user_errors, r.user_ended) for r in asked] == [
        (2001, True, 0, True),
        (2006, True, 0, True),
    ]
    assert [r.user_turns for r in asked] == [2, 3]  # one question a fact, then the end
    guessed = _conversational(tmp_path, "non-asking", "user-cooperative")
    assert [(r.passed, r.user_errors) for r in guessed] == [(False, 0), (False, 0)]


def test_on_the_conversational_suite_a_flawed_user_is_a_user_error(tmp_path):
    leaked = _conversational(tmp_path, "asking", "user-goal-leaking")
    assert all(r.user_errors == 1 for r in leaked)  # the goal told in the first reply
    stopped = _conversational(tmp_path, "asking", "user-early-stopping")
    assert all(r.user_errors == 1 and not r.passed for r in stopped)

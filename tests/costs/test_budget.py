"""The spending limit: admission rule, and a run of scripted models stopped at the right sample."""

import pytest
from inspect_ai.model import ModelUsage
from typer.testing import CliRunner

from occubench.analysis import priced
from occubench.cli import _common, app
from occubench.costs import load_prices
from occubench.costs._budget import BudgetExhausted, SpendGuard
from occubench.errors import ErrorSource
from occubench.results import read_runs

runner = CliRunner()
PRICES = """models:
  occubench/trusting: {input_per_mtok: 1000.0, output_per_mtok: 2000.0}
  occubench/canned: {input_per_mtok: 1000.0, output_per_mtok: 2000.0}
"""


@pytest.fixture(autouse=True)
def wide_console():
    for console in (_common.console, _common.err_console):
        console.width = 200


def one_dollar(model: str, usage: ModelUsage) -> float:
    return usage.total_tokens / 100


def test_admission_counts_samples_in_flight_at_the_expected_cost():
    guard = SpendGuard(10.0, one_dollar, expected_per_sample=3.0)
    guard.admit("a")
    guard.admit("b")
    guard.admit("c")  # 0 + 3 x 3 = 9 <= 10
    with pytest.raises(BudgetExhausted, match="budget of \\$10.0000"):
        guard.admit("d")  # 0 + 4 x 3 = 12 > 10
    guard.admit("a")  # a retry of a running sample passes
    guard.charge("m", ModelUsage(total_tokens=100))
    guard.finish("a", {"m": ModelUsage(total_tokens=100)})  # a cost 1: the mean is now 1
    assert guard.per_sample() == 1.0 and guard.spend.spent == 1.0
    guard.admit("d")  # 1 + (2 + 1) x 1 = 4 <= 10
    assert guard.spend.in_flight == 3 and guard.spend.refused == 1
    guard.finish("never-admitted", {"m": ModelUsage(total_tokens=10_000)})
    assert guard.spend.finished == 1


def run_args(log_dir, prices, *extra):
    return [
        "run",
        "--agent-model",
        "occubench/trusting",
        "--simulator-model",
        "occubench/canned",
        "--dataset",
        "reference",
        "--with-plan",
        "--tasks",
        "1001",
        "--epochs",
        "5",
        "--prices",
        str(prices),
        "--display",
        "none",
        "--workers",
        "1",
        "--max-samples",
        "1",
        "--log-dir",
        str(log_dir),
        *extra,
    ]


def test_budget_stops_the_run_at_the_right_sample_and_a_rerun_finishes(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    free = runner.invoke(app, run_args(tmp_path / "free", prices))
    assert free.exit_code == 0, free.output
    free_rows = priced(read_runs([tmp_path / "free"]), load_prices(prices))
    assert len({round(r.cost or 0, 9) for r in free_rows}) == 1  # every epoch costs the same
    sample_cost = free_rows[0].cost or 0
    # room for two samples and a half: the third would pass the budget
    budget = 2.5 * sample_cost
    stopped = runner.invoke(app, run_args(tmp_path / "run", prices, "--budget", str(budget)))
    assert "Estimate before the run" in stopped.output
    assert "3 sample(s) were not started" in stopped.output, stopped.output
    assert "The run did not complete" in stopped.output and stopped.exit_code == 1
    rows = read_runs([tmp_path / "run"])
    assert sorted(r.epoch for r in rows if r.passed) == [1, 2]
    refused = [r for r in rows if r.error is not None]
    assert [r.error_source for r in refused] == [ErrorSource.BUDGET] * 3
    assert all(r.passed is None for r in refused)  # not scored as agent failures
    again = runner.invoke(app, run_args(tmp_path / "run", prices, "--budget", str(10 * budget)))
    assert again.exit_code == 0, again.output
    rows = read_runs([tmp_path / "run"])
    assert len(rows) == 5 and all(r.passed for r in rows)


def test_budget_needs_prices_for_every_model(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("models:\n  occubench/trusting: {input_per_mtok: 1, output_per_mtok: 1}\n")
    result = runner.invoke(app, run_args(tmp_path / "x", prices, "--budget", "5"))
    assert result.exit_code == 2 and "no price for occubench/canned" in result.output
    assert "Traceback" not in result.output


def test_shards_share_the_budget():
    from occubench.config import EvalOptions, RunConfig
    from occubench.roles import Role
    from occubench.scale import RunSpec, ShardSpec

    spec = RunSpec(
        agent="a",
        roles={Role.SIMULATOR: "s"},
        config=RunConfig(),
        options=EvalOptions(budget=12.0),
        log_dir="x",
    )
    shards = [ShardSpec(run=spec, index=i, count=4, task_ids=[i]) for i in range(1, 5)]
    assert [s.budget() for s in shards] == [3.0] * 4
    assert (
        ShardSpec(
            run=spec.model_copy(update={"options": EvalOptions()}), index=1, count=1, task_ids=[1]
        ).budget()
        is None
    )

"""The spending limit: call ceilings, reservations, admission, and runs of scripted models
that must stay within their budget whatever the concurrency and however wrong the estimate."""

import shlex
import sys
from pathlib import Path

import anyio
import pytest
import yaml
from inspect_ai.hooks import Hooks, ModelUsageData, hooks
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolInfo
from typer.testing import CliRunner

from occubench.calls import resilient
from occubench.calls._tokens import PROMPT_OVERHEAD_TOKENS, prompt_tokens
from occubench.cli import app
from occubench.config import ResolvedRun, RunConfig
from occubench.costs import PriceTable, estimate_run, load_prices, usage_cost
from occubench.costs._budget import (
    CallCeiling,
    Spend,
    SpendGuard,
    call_ceiling,
    combined,
    spending_limit,
)
from occubench.errors import BudgetExhausted, ErrorSource
from occubench.grading._scorer import paper_vote
from occubench.results import read_runs
from occubench.roles import Role

runner = CliRunner()
AGENT = "occubench/careful"  # re-reads every step three times: ~3x the default estimate
SIMULATOR = "occubench/canned"
PRICES = f"""models:
  {AGENT}: {{input_per_mtok: 1000.0, output_per_mtok: 2000.0}}
  {SIMULATOR}: {{input_per_mtok: 1000.0, output_per_mtok: 2000.0}}
"""
TASKS = [1001, 1002, 1003, 1004]
EPOCHS = 2


class Meter:
    """What every model call of a run cost, priced apart from the guard (``MeterHooks``)."""

    prices = PriceTable.model_validate(yaml.safe_load(PRICES))
    on = False
    spent = 0.0


@hooks(name="test_budget_meter", description="Prices every model call of a test run.")
class MeterHooks(Hooks):
    def enabled(self) -> bool:
        return Meter.on

    async def on_model_usage(self, data: ModelUsageData) -> None:
        Meter.spent += usage_cost(Meter.prices, data.model_name, data.usage) or 0.0


@pytest.fixture
def meter():
    Meter.on, Meter.spent = True, 0.0
    yield Meter
    Meter.on = False


def said(result) -> str:
    """A command's output as one line (the console folds long lines)."""
    return " ".join(result.output.split())


def dollars(model: str, usage: ModelUsage) -> float:
    """One cent a token, input (cache reads at half) and output alike."""
    cached = (usage.input_tokens_cache_read or 0) / 2
    return (usage.input_tokens + cached + usage.output_tokens) / 100


def ceiling(tokens: int) -> CallCeiling:
    """A call that can cost tokens / 100 dollars (all of it input)."""
    return CallCeiling(input_tokens=tokens, output_tokens=0)


# --- the ceiling of one call --------------------------------------------------------------


def test_a_call_ceiling_bounds_its_prompt_by_bytes_and_its_reply_by_max_tokens():
    model = get_model("mockllm/model", config=GenerateConfig(max_tokens=300))
    messages = [
        ChatMessageUser(content="réservation " * 50),
        ChatMessageAssistant(
            content="", tool_calls=[ToolCall(id="1", function="book", arguments={"n": 2})]
        ),
    ]
    tools = [ToolInfo(name="book", description="Book a room.")]
    found = call_ceiling(model, messages, tools, GenerateConfig())
    assert found.output_tokens == 300  # the model's own max_tokens
    text_bytes = len(("réservation " * 50).encode())
    assert found.input_tokens >= text_bytes + PROMPT_OVERHEAD_TOKENS
    assert found.input_tokens > 4 * prompt_tokens(messages, tools)  # bytes, not an estimate
    call = GenerateConfig(max_tokens=50, num_choices=3, system_message="x" * 4000)
    bigger = call_ceiling(model, messages, tools, call)
    assert bigger.output_tokens == 150  # the call's max_tokens, times its choices
    assert bigger.input_tokens >= found.input_tokens + 4000  # the system message counts
    unbounded = call_ceiling(get_model("mockllm/model"), messages, tools, GenerateConfig())
    assert unbounded.output_tokens is None


def test_a_ceiling_is_priced_at_the_dearer_of_input_and_cache_reads():
    guard = SpendGuard(10.0, dollars, expected_per_sample=1.0)
    assert guard.ceiling_cost("m", CallCeiling(input_tokens=100, output_tokens=50)) == 1.5
    dear_cache = SpendGuard(10.0, lambda m, u: (u.input_tokens_cache_read or 0) / 10, 1.0)
    assert dear_cache.ceiling_cost("m", ceiling(100)) == 10.0


# --- reservations: what is in flight can never pass the limit -----------------------------


def test_calls_in_flight_never_pass_the_limit_and_wait_for_each_other():
    async def scenario():
        guard = SpendGuard(10.0, dollars, expected_per_sample=1.0)
        made, done = [], [anyio.Event() for _ in range(6)]
        peaks = []

        async def call(i: int) -> None:
            async with guard.reserved("m", ceiling(300)):  # $3 at most
                made.append(i)
                peaks.append(guard.spend.spent + guard.spend.reserved)
                await done[i].wait()
                guard.charge("m", ModelUsage(input_tokens=100))  # $1 in fact

        async with anyio.create_task_group() as group:
            for i in range(6):
                group.start_soon(call, i)
            await anyio.wait_all_tasks_blocked()
            assert sorted(made) == [0, 1, 2]  # 3 x $3 <= $10; the others wait
            done[0].set()
            await anyio.wait_all_tasks_blocked()
            assert len(made) == 4  # $1 spent + 2 x $3 in flight + $3 = $10
            done[1].set()
            done[2].set()
            await anyio.wait_all_tasks_blocked()
            assert len(made) == 5  # $3 spent + 1 x $3 + $3 = $9; a 6th would be $12
            done[3].set()
            await anyio.wait_all_tasks_blocked()
            assert len(made) == 6
            for event in done[4:]:
                event.set()
        assert max(peaks) <= 10.0 and guard.spend.spent == 6.0
        assert guard.spend.reserved == 0.0
        with pytest.raises(BudgetExhausted, match="can cost up to \\$5.0000 .* has \\$4.0000 left"):
            await guard.reserve("m", ceiling(500))  # $6 spent + $5 > $10: never fits
        with pytest.raises(BudgetExhausted, match="without max_tokens"):
            await guard.reserve("m", CallCeiling(input_tokens=1, output_tokens=None))

    anyio.run(scenario)


def test_a_call_that_would_pass_the_budget_never_reaches_the_provider():
    asked = []

    def answer(input, tools, tool_choice, config):
        asked.append(input[-1].text)
        output = ModelOutput.from_content("mockllm/model", "ok")
        output.usage = ModelUsage(input_tokens=10, output_tokens=2, total_tokens=12)
        return output

    model = resilient(get_model("mockllm/model", custom_outputs=answer, memoize=False))
    config = GenerateConfig(max_tokens=100)

    async def ask(limit: float) -> None:
        with spending_limit(SpendGuard(limit, dollars, expected_per_sample=1.0)) as guard:
            try:
                await model.generate("hello", config=config)
            finally:
                assert guard is not None and guard.spend.reserved == 0.0
                spent.append(guard.spend.spent)

    spent: list[float] = []
    with pytest.raises(BudgetExhausted, match="call not made"):
        anyio.run(ask, 5.0)  # the prompt's bytes, the overhead and 100 tokens out: > $10
    assert asked == [] and spent == [0.0]
    anyio.run(ask, 20.0)
    assert asked == ["hello"] and spent[-1] == pytest.approx(0.12)  # charged at its real cost
    anyio.run(model.generate, "again")  # no limit installed: no gate
    assert asked[-1] == "again"


# --- admission: one sample until one has ended, then the measured mean ---------------------


def test_admission_runs_one_sample_until_one_ends_then_uses_the_mean_and_the_call_room():
    async def scenario():
        guard = SpendGuard(20.0, dollars, expected_per_sample=2.0)  # the estimate: $2
        await guard.admit("a")
        admitted: list[str] = []

        async def admit(sample: str) -> None:
            try:
                await guard.admit(sample)
                admitted.append(sample)
            except BudgetExhausted:
                admitted.append(f"refused {sample}")

        async with anyio.create_task_group() as group:
            for sample in "bcd":
                group.start_soon(admit, sample)
            await anyio.wait_all_tasks_blocked()
            assert admitted == []  # none has ended: the estimate is not trusted yet
            async with guard.reserved("m", ceiling(200)):  # the largest call: $2
                guard.charge("m", ModelUsage(input_tokens=500), "a")
            guard.finish("a", stopped=False)  # a cost $5: the mean
            await anyio.wait_all_tasks_blocked()
            # $5 spent + in flight (5 - 0 each) + $5 + $2 room <= $20: two of b, c, d
            assert len(admitted) == 2
            for sample in admitted[:]:
                guard.charge("m", ModelUsage(input_tokens=500), sample)
                guard.finish(sample, stopped=False)
                await anyio.wait_all_tasks_blocked()
            # $15 spent + $5 + $2 > $20 and none in flight: the third is refused
            assert admitted[-1].startswith("refused")
        assert (
            guard.spend.model_dump()
            == Spend(limit=20.0, spent=15.0, finished=3, finished_cost=15.0, refused=1).model_dump()
        )

    anyio.run(scenario)


def test_a_sample_in_flight_that_spent_more_than_the_mean_raises_it():
    async def scenario():
        guard = SpendGuard(100.0, dollars, expected_per_sample=1.0)
        await guard.admit("a")
        guard.charge("m", ModelUsage(input_tokens=100), "a")
        guard.finish("a", stopped=False)  # mean $1
        await guard.admit("b")
        guard.charge("m", ModelUsage(input_tokens=3000), "b")  # b, still running: $30
        assert guard.per_sample() == 30.0

    anyio.run(scenario)


def test_a_sample_stopped_before_any_paid_call_counts_as_not_started():
    async def scenario():
        guard = SpendGuard(100.0, dollars, expected_per_sample=1.0)
        await guard.admit("a")
        guard.finish("a", stopped=True)
        await guard.admit("b")
        guard.charge("m", ModelUsage(input_tokens=100), "b")
        guard.finish("b", stopped=True)
        guard.finish("never-admitted", stopped=True)
        assert (guard.spend.refused, guard.spend.stopped, guard.spend.finished) == (1, 1, 0)

    anyio.run(scenario)


def test_shards_spends_combine():
    total = combined([Spend(limit=5, spent=4, finished=2, stopped=1), Spend(limit=5, refused=3)])
    assert total is not None and (total.limit, total.spent, total.finished) == (10, 4, 2)
    assert total.reached and combined([]) is None


# --- a refused call is never an agent failure ------------------------------------------------


def test_a_refused_judge_call_errors_the_sample_instead_of_voting_no():
    class Refusing:
        async def generate(self, *args, **kwargs):
            raise BudgetExhausted("call not made")

    with pytest.raises(BudgetExhausted):
        anyio.run(
            lambda: paper_vote(
                Refusing(), "judge this", index=0, cache=False, config=GenerateConfig()
            )
        )


# --- end to end through the CLI --------------------------------------------------------------


def run_args(log_dir, prices, *extra):
    return [
        "run",
        "--agent-model",
        AGENT,
        "--simulator-model",
        SIMULATOR,
        "--dataset",
        "reference",
        "--with-plan",
        "--tasks",
        ",".join(map(str, TASKS)),
        "--epochs",
        str(EPOCHS),
        "--prices",
        str(prices),
        "--display",
        "none",
        "--workers",
        "1",
        "--log-dir",
        str(log_dir),
        *extra,
    ]


@pytest.fixture
def prices(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(PRICES)
    return path


def estimate(prices) -> float:
    config = RunConfig(dataset="reference", task_ids=TASKS, with_plan=True)
    found = estimate_run(
        ResolvedRun.of(config),
        agent=AGENT,
        roles={Role.SIMULATOR: SIMULATOR},
        epochs=EPOCHS,
        prices=load_prices(prices),
    )
    assert found.total_cost is not None
    return found.total_cost


@pytest.mark.parametrize("samples_at_once", [[], ["--max-samples", "1"]], ids=["default", "one"])
def test_a_run_with_an_estimate_3x_too_low_stays_within_its_budget(
    tmp_path, prices, meter, samples_at_once
):
    budget = estimate(prices)
    bounded = ["--max-tokens", "agent=1024", "--max-tokens", "simulator=1024", *samples_at_once]
    free = runner.invoke(app, run_args(tmp_path / "free", prices, *bounded))
    assert free.exit_code == 0, free.output
    assert meter.spent > 2.5 * budget  # what the run really costs: ~3x the estimate
    meter.spent = 0.0
    result = runner.invoke(
        app, run_args(tmp_path / "run", prices, "--budget", str(budget), *bounded)
    )
    assert 0 < meter.spent <= budget  # every call of the run, priced apart
    assert result.exit_code == 1, result.output
    text = said(result)
    assert "Budget reached: spent $" in text and f"of the budget of ${budget:,.4f}" in text
    assert "The run did not complete" in text
    rows = read_runs([tmp_path / "run"])
    stopped = [r for r in rows if r.error is not None]
    assert stopped and all(r.error_source is ErrorSource.BUDGET for r in stopped)
    assert all(r.passed is None and not r.counted for r in stopped)  # never agent failures
    finished = sum(r.passed is not None for r in rows)
    assert f"{finished} sample(s) finished" in text
    assert finished + len(stopped) == len(TASKS) * EPOCHS


def test_a_sample_dearer_than_the_budget_is_stopped_half_way_not_graded(tmp_path, prices, meter):
    budget = 10.0  # one careful sample costs ~$20; its calls' ceilings ~$25-30 each
    result = runner.invoke(
        app,
        run_args(
            tmp_path / "run",
            prices,
            "--tasks",
            "1001",
            "--epochs",
            "1",
            "--max-tokens",
            "agent=200",
            "--max-tokens",
            "simulator=200",
            "--budget",
            str(budget),
        ),
    )
    assert result.exit_code == 1, result.output
    assert 0 < meter.spent <= budget
    text = said(result)
    assert (
        "0 sample(s) finished, 0 not started, 1 stopped by a model call it could not cover" in text
    )
    (row,) = read_runs([tmp_path / "run"])
    # the paper protocol ends the loop on an agent API failure and grades what exists, and
    # counts errors as failed tasks: neither applies to a call the budget refused
    assert row.error_source is ErrorSource.BUDGET and "call not made" in (row.error or "")
    assert row.passed is None and not row.counted


def test_a_stopped_run_says_so_and_the_same_command_finishes_it(tmp_path, prices, meter):
    args = run_args(tmp_path / "run", prices, "--budget", "30")
    stopped = runner.invoke(app, args)
    assert stopped.exit_code == 1 and "Budget reached" in said(stopped)
    assert meter.spent <= 30
    again = runner.invoke(app, run_args(tmp_path / "run", prices, "--budget", "1000"))
    assert again.exit_code == 0, again.output
    assert "Budget: spent $" in said(again)
    rows = read_runs([tmp_path / "run"])
    assert len(rows) == len(TASKS) * EPOCHS and all(r.passed for r in rows)


def test_an_agent_program_call_without_max_tokens_is_a_budget_error_not_the_agents(
    tmp_path, prices
):
    program = Path(__file__).parents[1] / "serving" / "agent_program.py"
    args = run_args(tmp_path / "run", prices, "--tasks", "1001", "--epochs", "1")
    command = shlex.join([sys.executable, str(program), "bridge", "careful"])
    args += ["--agent-command", command, "--budget", "1000"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "0 sample(s) finished, 1 not started" in said(result)
    (row,) = read_runs([tmp_path / "run"])
    assert row.error_source is ErrorSource.BUDGET and "without max_tokens" in (row.error or "")


def test_budget_needs_prices_for_every_model(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"models:\n  {AGENT}: {{input_per_mtok: 1, output_per_mtok: 1}}\n")
    result = runner.invoke(app, run_args(tmp_path / "x", prices, "--budget", "5"))
    assert result.exit_code == 2 and f"no price for {SIMULATOR}" in said(result)
    assert "Traceback" not in result.output


def test_budget_needs_a_max_tokens_for_every_role(tmp_path, prices):
    result = runner.invoke(
        app,
        run_args(
            tmp_path / "x",
            prices,
            "--protocol",
            "occubench",
            "--max-tokens",
            "agent=100",
            "--budget",
            "5",
        ),
    )
    assert result.exit_code == 2, result.output
    text = said(result)
    assert "simulator, verifier calls of this protocol set none" in text
    assert "--max-tokens simulator=16384 --max-tokens verifier=16384" in text
    assert not (tmp_path / "x").exists() or not any((tmp_path / "x").rglob("*.eval"))


def test_shards_share_the_budget():
    from occubench.config import EvalOptions
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

"""The cost estimate against the tokens offline runs measure, per role."""

import pytest
from inspect_ai.model import get_model

from conftest import RELEASE_DIR, run_task
from occubench.config import ResolvedRun, RunConfig
from occubench.costs import Assumptions, PriceTable, compare_estimate, estimate_run
from occubench.dataset import reference_suite_dir
from occubench.results import read_runs
from occubench.roles import Role
from user_fixtures import user_dataset

REFERENCE = str(reference_suite_dir())
CASES = {
    # name: (dataset, agent, simulator, verifier, task args, assumptions)
    "reference E0": (REFERENCE, "trusting", "canned", None, {"with_plan": True}, {}),
    "reference E3": (
        REFERENCE,
        "trusting",
        "canned",
        "scripted-judge",
        {"with_plan": True, "env_mode": "E3"},
        {},
    ),
    "reference E0 re-reading agent": (
        REFERENCE,
        "careful",
        "canned",
        None,
        {"with_plan": True},
        {"calls_per_step": 3},
    ),
    "sample E0": (str(RELEASE_DIR), "steps-agent", "example-simulator", "scripted-judge", {}, {}),
    "reference E0 paper": (
        REFERENCE,
        "trusting",
        "canned",
        "scripted-judge",
        {"with_plan": True, "protocol": "paper"},
        {},
    ),
    "sample E0 paper": (
        str(RELEASE_DIR),
        "steps-agent",
        "example-simulator",
        "scripted-judge",
        {"protocol": "paper"},
        {},
    ),
    "sample E3": (
        str(RELEASE_DIR),
        "steps-agent",
        "example-simulator",
        "scripted-judge",
        {"env_mode": "E3"},
        {"agent_retries": False},  # steps-agent makes its 16 calls, failed ones included
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_estimate_is_within_25_percent_of_the_measured_tokens(tmp_path, release_dir, case):
    dataset, agent, simulator, verifier, args, assumed = CASES[case]
    args = {"protocol": "occubench", **args}
    roles = {Role.SIMULATOR: f"occubench/{simulator}"}
    if verifier:
        roles[Role.VERIFIER] = f"occubench/{verifier}"
    log = run_task(
        tmp_path,
        agent=get_model(f"occubench/{agent}", memoize=False),
        roles={r.value: get_model(m, memoize=False) for r, m in roles.items()},
        dataset=dataset,
        **args,
    )
    estimate = estimate_run(
        ResolvedRun.of(RunConfig(dataset=dataset, **args)),
        agent=f"occubench/{agent}",
        roles=roles,
        assumptions=Assumptions(**assumed),
    )
    compared = {c.role: c for c in compare_estimate(estimate, read_runs([log.location]))}
    assert set(compared) == {"agent", "simulator", *(["verifier"] if verifier else [])}
    for role, c in compared.items():
        assert 0.75 <= c.ratio <= 1.25, (case, role, c)
    if args.get("env_mode") == "E3":
        assert sum(t.failed_calls for t in estimate.per_task) > 0  # the fault plan was applied


def test_epochs_and_prices_scale_the_estimate():
    config = ResolvedRun.of(RunConfig(dataset=REFERENCE, with_plan=True, task_ids=[1001, 1002]))
    roles = {Role.SIMULATOR: "s/sim"}
    one = estimate_run(config, agent="a/agent", roles=roles)
    prices = PriceTable.model_validate(
        {"models": {"a/agent": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}}
    )
    three = estimate_run(config, agent="a/agent", roles=roles, epochs=3, prices=prices)
    assert three.samples == 6 and one.samples == 2
    for role, tokens in one.tokens().items():
        assert three.tokens()[role].total == 3 * tokens.total
    agent = next(r for r in three.roles if r.role == "agent")
    expected = (agent.tokens.input_tokens * 2.0 + agent.tokens.output_tokens * 8.0) / 1e6
    assert agent.cost == pytest.approx(expected)
    assert three.total_cost is None and three.unpriced_models == ["s/sim"]
    assert one.total_cost is None and one.unpriced_models == []  # no price table at all


def test_a_judge_is_estimated_only_when_one_runs():
    reference = RunConfig(dataset=REFERENCE, with_plan=True)
    checks_only = estimate_run(ResolvedRun.of(reference), agent="a", roles={Role.SIMULATOR: "s"})
    assert set(checks_only.tokens()) == {"agent", "simulator"}
    assert not any(t.judged for t in checks_only.per_task)
    judged = estimate_run(
        ResolvedRun.of(reference), agent="a", roles={Role.SIMULATOR: "s", Role.VERIFIER: "v"}
    )
    assert judged.tokens()["verifier"].calls == 10 * reference.votes


def test_the_estimate_says_what_it_leaves_out():
    config = RunConfig(dataset=REFERENCE, env_mode="E2", fault_engine="prompt")
    estimate = estimate_run(ResolvedRun.of(config), agent="a", roles={Role.SIMULATOR: "s"})
    assert any("told to make" in note for note in estimate.notes)


def test_the_judge_has_its_row_whatever_model_plays_it(release_dir):
    run = ResolvedRun.of(RunConfig(dataset=str(release_dir), task_ids=[11]))
    estimate = estimate_run(run, agent="a", roles={Role.SIMULATOR: "s"})
    (verifier,) = [r for r in estimate.roles if r.role == "verifier"]
    assert verifier.model == "s" and verifier.logged_as == "simulator"
    assert verifier.tokens.calls == run.config.votes
    simulator = next(r for r in estimate.roles if r.role == "simulator")
    assert simulator.tokens.calls < verifier.tokens.calls + simulator.tokens.calls
    from occubench.report import estimate_table

    table = estimate_table(estimate)
    assert "s (the simulator's model)" in list(table.columns[1].cells)


def test_the_preflight_is_in_the_estimate_once_per_role():
    config = ResolvedRun.of(RunConfig(dataset=REFERENCE, with_plan=True, task_ids=[1001]))
    roles = {Role.SIMULATOR: "s/sim", Role.VERIFIER: "v/judge"}
    prices = PriceTable.model_validate(
        {"models": {m: {"input_per_mtok": 1.0, "output_per_mtok": 4.0}
                    for m in ("a/agent", "s/sim", "v/judge")}}
    )  # fmt: skip
    bare = estimate_run(config, agent="a/agent", roles=roles, prices=prices, preflight=False)
    checked = estimate_run(config, agent="a/agent", roles=roles, prices=prices, epochs=3)
    assert bare.preflight == []
    assert [(c.role, c.model, c.tokens.calls) for c in checked.preflight] == [
        ("agent", "a/agent", 2),
        ("simulator", "s/sim", 2),
        ("verifier", "v/judge", 2),
    ]  # two turns per role, however many epochs
    sample_cost = sum(c.cost or 0.0 for c in checked.roles)
    preflight_cost = sum(c.cost or 0.0 for c in checked.preflight)
    assert preflight_cost > 0 and checked.total_cost == pytest.approx(sample_cost + preflight_cost)
    assert bare.total_cost == pytest.approx(sample_cost / 3)


def test_cache_reads_are_counted_and_priced_as_cached():
    run = ResolvedRun.of(RunConfig(dataset=str(RELEASE_DIR), task_ids=[11]))
    roles = {Role.SIMULATOR: "s/sim", Role.VERIFIER: "v/judge"}
    full = {"input_per_mtok": 1.0, "output_per_mtok": 4.0}
    cheap = {**full, "cached_input_per_mtok": 0.1}
    names = ("a/agent", "s/sim", "v/judge")
    plain = PriceTable.model_validate({"models": {m: full for m in names}})
    cached = PriceTable.model_validate({"models": {m: cheap for m in names}})
    at_full = estimate_run(run, agent="a/agent", roles=roles, prices=plain, preflight=False)
    at_cached = estimate_run(run, agent="a/agent", roles=roles, prices=cached, preflight=False)
    simulator = next(r for r in at_cached.roles if r.role == "simulator").tokens
    assert 0 < simulator.cached_input_tokens < simulator.input_tokens  # its first call is not
    for before, after in zip(at_full.roles, at_cached.roles, strict=True):
        discount = after.tokens.cached_input_tokens * 0.9 / 1e6
        assert after.cost == pytest.approx((before.cost or 0) - discount)
    assert at_full.tokens() == at_cached.tokens()  # the price changes, never the content


def test_an_agent_program_with_its_own_model_is_said_not_counted():
    from occubench.config import NO_AGENT_MODEL

    config = RunConfig(dataset=REFERENCE, task_ids=[1001], agent_command="python agent.py {url}")
    roles = {Role.SIMULATOR: "s/sim"}
    own = estimate_run(ResolvedRun.of(config), agent=NO_AGENT_MODEL, roles=roles)
    assert "agent" not in [r.role for r in own.roles] and own.roles  # the others stay
    assert [r.role for r in own.preflight] == ["simulator"]
    assert any("agent program's own model calls" in note for note in own.notes)
    bridged = estimate_run(ResolvedRun.of(config), agent="a/agent", roles=roles)
    assert "agent" in [r.role for r in bridged.roles]  # through the bridge: the run's calls
    assert not any("agent program" in note for note in bridged.notes)


def test_the_users_calls_are_estimated_on_a_conversational_run(tmp_path):
    """The asking agent and the cooperative user on the suite: every role within 10%."""
    args = {"protocol": "occubench", "with_plan": True, "dataset": "conversational"}
    roles = {
        Role.SIMULATOR: "occubench/canned",
        Role.VERIFIER: "occubench/scripted-judge",
        Role.USER: "occubench/user-cooperative",
    }
    log = run_task(
        tmp_path,
        agent=get_model("occubench/asking", memoize=False),
        roles={r.value: get_model(m, memoize=False) for r, m in roles.items()},
        **args,
    )
    estimate = estimate_run(
        ResolvedRun.of(RunConfig(**args)),
        agent="occubench/asking",
        roles=roles,
        assumptions=Assumptions(calls_per_step=3),  # the asking agent walks plans carefully
    )
    rows = read_runs([log.location])
    compared = {c.role: c for c in compare_estimate(estimate, rows)}
    assert set(compared) == {"agent", "simulator", "verifier", "user"}
    for role, c in compared.items():
        assert 0.9 <= c.ratio <= 1.1, (role, c)
    measured = {str(r.task_id): r.user_turns for r in rows}
    assert {str(t.task_id): t.user_turns for t in estimate.per_task} == measured
    assert estimate.tokens()["user"].calls == sum(measured.values())
    assert any("simulated user's replies are not counted" in n for n in estimate.notes)


def test_the_users_turn_budget_caps_its_calls(tmp_path):
    """Two facts held back: two questions and the close, unless the budget ends it first."""
    run = RunConfig(dataset=str(user_dataset(tmp_path / "data")))
    roles = {Role.SIMULATOR: "s", Role.USER: "u"}

    def turns(budget):
        config = run.model_copy(update={"user_turns": budget})
        estimate = estimate_run(ResolvedRun.of(config), agent="a", roles=roles, preflight=False)
        (task,) = estimate.per_task
        assert estimate.tokens()["user"].calls == task.user_turns
        return task.user_turns

    assert [turns(b) for b in (None, 3, 2, 1)] == [3, 3, 2, 1]
    capped = run.model_copy(update={"user_turns": 2})
    estimate = estimate_run(ResolvedRun.of(capped), agent="a", roles=roles, preflight=False)
    assert next(r for r in estimate.roles if r.role == "user").model == "u"


def test_a_task_without_a_user_has_no_user_calls():
    run = RunConfig(dataset=REFERENCE, with_plan=True)
    roles = {Role.SIMULATOR: "s", Role.USER: "u"}  # bound, never called
    estimate = estimate_run(ResolvedRun.of(run), agent="a", roles=roles, preflight=False)
    assert "user" not in estimate.tokens()
    assert not any(t.user_turns for t in estimate.per_task)
    assert not any("simulated user" in n for n in estimate.notes)

"""Online simulator checks in runs: each flawed simulator caught by its own check."""

import pytest
from inspect_ai.model import get_model

from conftest import run_task
from occubench.agent import episode_in
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import reference_suite_dir
from occubench.report import build_report, report_tables
from occubench.results import read_runs
from occubench.simchecks import SimCheckKind

FLAWED = {
    "occubench/fabricating": SimCheckKind.FABRICATION,
    "occubench/omitting": SimCheckKind.INITIAL_STATE,
    "occubench/inconsistent": SimCheckKind.CONSISTENCY,
}


def checked_run(log_dir, simulator, fallback=None, **task_args):
    """The careful agent (it re-reads every step) on the reference suite, checks on."""
    roles = {"simulator": get_model(simulator, memoize=False)}
    if fallback:
        roles["simulator_fallback"] = get_model(fallback, memoize=False)
    task_args.setdefault("sim_checks", True)
    return run_task(
        log_dir,
        agent="occubench/careful",
        roles=roles,
        dataset=str(reference_suite_dir()),
        with_plan=True,
        **task_args,
    )


def failed_kinds(log):
    return {
        f.kind.value
        for sample in log.samples
        for step in episode_in(sample.store).steps
        for f in (step.check.failures if step.check else [])
    }


def test_the_canned_simulator_passes_every_check(tmp_path):
    log = checked_run(tmp_path, "occubench/canned")
    assert failed_kinds(log) == set()
    for sample in log.samples:
        episode = episode_in(sample.store)
        assert episode.simulator_suspect is False
        assert episode.sim_checked == episode.tool_calls > 0
    calls = [e for e in log.samples[0].events if e.event == "model" and e.role == "simulator"]
    system = calls[0].input[0].text
    system = log.samples[0].attachments.get(system.removeprefix("attachment://"), system)
    assert "### Checked observations" in system


@pytest.mark.parametrize("simulator", list(FLAWED))
def test_each_flawed_simulator_is_caught_by_its_own_check(tmp_path, simulator):
    log = checked_run(tmp_path, simulator)
    kinds = failed_kinds(log)
    assert FLAWED[simulator].value in kinds
    for other, kind in FLAWED.items():
        if other != simulator and kind is not SimCheckKind.INITIAL_STATE:
            assert kind.value not in kinds, (simulator, kind)
    if simulator == "occubench/fabricating":
        assert kinds == {"fabrication"}
    if simulator == "occubench/omitting":
        assert kinds == {"initial_state"}
    suspect = [episode_in(s.store) for s in log.samples if episode_in(s.store).simulator_suspect]
    assert suspect, simulator
    step = next(st for e in suspect for st in e.steps if st.check)
    check = step.check
    assert check is not None
    # the simulator was re-asked once, with the problem named, and both answers are logged
    assert check.reask_model == simulator and check.suspect is True
    assert check.reask_failures and step.attempts == 2


def test_a_fallback_simulator_repairs_the_observations(tmp_path):
    log = checked_run(tmp_path, "occubench/fabricating", fallback="occubench/canned")
    checks = [st.check for s in log.samples for st in episode_in(s.store).steps if st.check]
    assert checks and all(c.kept == "reask" for c in checks)
    assert all(c.reask_failures == [] for c in checks)
    assert all(c.rejected is not None for c in checks)
    assert not any(episode_in(s.store).simulator_suspect for s in log.samples)
    assert "simulator_fallback" in log.samples[0].role_usage


@pytest.mark.parametrize(
    ("protocol", "sim_checks"), [("occubench", False), ("paper", None)], ids=["off", "paper"]
)
def test_checks_off_leave_no_mark(tmp_path, protocol, sim_checks):
    log = checked_run(
        tmp_path, "occubench/fabricating", sim_checks=sim_checks, protocol=protocol, task_ids="1001"
    )
    episode = episode_in(log.samples[0].store)
    assert episode.simulator_suspect is None
    assert episode.sim_checked is None
    assert failed_kinds(log) == set()


def test_the_occubench_protocol_checks_by_default(tmp_path):
    log = checked_run(tmp_path, "occubench/fabricating", sim_checks=None, task_ids="1001")
    assert episode_in(log.samples[0].store).simulator_suspect is True
    assert ResolvedRun.of(RunConfig(protocol="occubench")).points.sim_checks
    assert not ResolvedRun.of(RunConfig(protocol="paper")).points.sim_checks
    # left to the protocol, the checks give way to faults the simulator is told to make
    prompt_faults = RunConfig(protocol="occubench", env_mode="E1", fault_engine="prompt")
    assert not ResolvedRun.of(prompt_faults).points.sim_checks


def test_checks_refuse_faults_the_simulator_makes():
    with pytest.raises(ValueError, match="fault_engine=prompt"):
        RunConfig(sim_checks=True, env_mode="E1", fault_engine="prompt")
    assert RunConfig(sim_checks=True, env_mode="E0", fault_engine="prompt").sim_checks


def test_the_report_shows_suspect_samples_apart(tmp_path):
    clean = checked_run(tmp_path / "canned", "occubench/canned")
    flawed = checked_run(tmp_path / "omitting", "occubench/omitting")
    rows = read_runs([clean.location, flawed.location])
    by_sim = {r.simulator_model for r in rows if r.simulator_suspect}
    assert by_sim == {"occubench/omitting"}
    report = build_report(rows, n_resamples=50)
    impact = {i.simulator: i for i in report.suspect_impact}
    assert impact["occubench/canned"].suspect == 0 and impact["occubench/canned"].rate == 1.0
    omitting = impact["occubench/omitting"]
    assert omitting.suspect == omitting.scored == 10 and omitting.clean_rate != omitting.clean_rate
    rates = {(r.simulator, r.dimension, r.group): r for r in report.invalid_rates}
    assert rates[("occubench/omitting", "simulator", "all")].rate == 1.0
    assert rates[("occubench/canned", "simulator", "all")].rate == 0.0
    per_env = [r for r in report.invalid_rates if r.dimension == "env"]
    assert len(per_env) == 20 and all(r.failures.get("initial_state") for r in per_env if r.suspect)
    titles = [t.title for t in report_tables(report)]
    assert any("with and without simulator-suspect" in t for t in titles)
    assert any(t.startswith("Simulator-invalid rate") for t in titles)

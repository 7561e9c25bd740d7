"""Protocol presets: every point has a value in each, overrides win, the log records them."""

import pytest

from conftest import run_task
from occubench.config import POINTS_METADATA, PRESETS, ProtocolPoints, ResolvedRun, RunConfig
from occubench.faults import FaultEngine
from occubench.protocols import MessageStyle, Protocol


@pytest.mark.parametrize("protocol", list(Protocol))
def test_every_point_has_a_value_in_each_preset(protocol):
    preset = PRESETS[protocol]
    assert set(preset.model_dump()) == set(ProtocolPoints.model_fields)
    assert all(value is not None for value in preset.model_dump().values())
    assert ResolvedRun.of(RunConfig(protocol=protocol)).points == preset


def test_every_point_can_be_overridden_from_the_run_configuration():
    for name in ProtocolPoints.model_fields:
        assert name in RunConfig.model_fields, name
        assert RunConfig.model_fields[name].default is None, name  # None: the preset's


def test_the_presets_differ_where_the_paper_and_occubench_differ():
    paper, ours = PRESETS[Protocol.PAPER], PRESETS[Protocol.OCCUBENCH]
    assert paper.fault_engine is FaultEngine.PROMPT and ours.fault_engine is FaultEngine.CODE
    assert not paper.validate_tool_args and ours.validate_tool_args
    assert (paper.max_turns, paper.max_tool_calls) == (200, 0)
    assert (ours.max_turns, ours.max_tool_calls) == (0, 200)
    assert (paper.agent_max_tokens, paper.simulator_max_tokens, paper.verifier_max_tokens) == (
        12288,
        12288,
        4096,
    )
    assert paper.simulator_retries == 9 and paper.pass_raw_observation  # 10 attempts, then on
    assert paper.errors_count_as_failures and not ours.errors_count_as_failures
    assert {paper.agent_messages, paper.simulator_messages, paper.verifier_messages} == {
        MessageStyle.PAPER
    }
    assert not paper.error_hints and not ours.error_hints


def test_paper_is_the_default_and_overrides_win():
    assert RunConfig().protocol is Protocol.PAPER
    config = RunConfig(fault_engine="code", max_turns=5, verifier_messages="occubench")
    points = ResolvedRun.of(config).points
    assert points.fault_engine is FaultEngine.CODE and points.max_turns == 5
    assert points.verifier_messages is MessageStyle.OCCUBENCH
    assert points.agent_messages is MessageStyle.PAPER  # the rest stays the paper's
    assert ResolvedRun.of(RunConfig(protocol="OCCUBENCH", error_hints=True)).points.error_hints


def test_the_log_records_the_preset_and_every_resolved_point(tmp_path):
    log = run_task(tmp_path, task_ids="26", protocol="paper", fault_engine="code")
    assert log.eval.metadata["config"]["protocol"] == "paper"
    points = ProtocolPoints.model_validate(log.eval.metadata[POINTS_METADATA])
    assert points == PRESETS[Protocol.PAPER].model_copy(update={"fault_engine": FaultEngine.CODE})


def test_a_resolved_run_holds_its_points_and_fault_engine_once():
    run = ResolvedRun.of(RunConfig(protocol="paper", env_mode="E1"))
    assert run.config.fault_engine is None  # the configuration as given, for the log
    assert run.points.fault_engine is FaultEngine.PROMPT
    assert run.fault_settings.fault_engine is FaultEngine.PROMPT
    assert run.points.sim_checks is False  # left to the protocol, off under simulator faults
    assert run.release is None and "release" not in run.model_dump()

"""Exact wording: the release's prompt constants read from a clone (parsed, never run)."""

import hashlib
import textwrap

import pytest
from inspect_ai.log import resolve_sample_attachments

from conftest import run_task
from occubench.config import RELEASE_METADATA, PromptsError, ReleasePrompts

AGENT = '''
import os
raise SystemExit("never run me")
EXECUTOR_SYSTEM_PROMPT = """RELEASE-AGENT scenario={task_scenario_name} \
now={current_time} {{braces}}"""
'''
VERIFIER = '''
VERIFIER_PROMPT = """RELEASE-VERIFIER {task_scenario_name}|{task_initial_state}|{state_description}
{agent_instruction}|{verification_plan}
TRAJECTORY:
{trajectory}
answer ```json
{{"is_correct": true}}
```"""
'''
FAULTS = '''
FAULT_PROMPT_E1 = """RELEASE-E1 {num_faults} events of {fault_duration} calls"""
FAULT_PROMPT_E2 = """RELEASE-E2 {num_faults} events of {fault_duration} calls"""
FAULT_PROMPT_E3 = """RELEASE-E3 {num_faults} events of {fault_duration} calls"""
'''
LWM = """
def simulate_tool_call(environment_system_prompt, tool_call_json):
    system_prompt = (
        environment_system_prompt
        + "\\n### OUTPUT FORMAT INSTRUCTIONS\\n"
        "RELEASE-FORMAT one object in tags."
    )
    current = (
        f"<agent_action>\\n{tool_call_json}\\n</agent_action>\\n"
        "### OUTPUT FORMAT INSTRUCTIONS\\n"
        "RELEASE-REMINDER tags."
    )
    return system_prompt, current
"""


def write_release(root, **replace):
    files = {"agent": AGENT, "verifier": VERIFIER, "fault_injection": FAULTS, "lwm": LWM}
    files.update(replace)
    package = root / "occubench"
    package.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (package / f"{name}.py").write_text(textwrap.dedent(text))
    return root


def test_the_constants_are_read_without_running_the_files(tmp_path):
    prompts = ReleasePrompts.read(write_release(tmp_path))  # agent.py would exit if run
    assert prompts.agent_system.format(scenario="S", date="D") == (
        "RELEASE-AGENT scenario=S now=D {braces}"
    )
    assert prompts.simulator_format == "RELEASE-FORMAT one object in tags."
    assert prompts.simulator_reminder == "RELEASE-REMINDER tags."
    assert prompts.fault_rules.render("E2", 3, 1) == "RELEASE-E2 3 events of 1 calls"
    sha = hashlib.sha256((tmp_path / "occubench" / "verifier.py").read_bytes()).hexdigest()
    assert prompts.files["occubench/verifier.py"] == sha


@pytest.mark.parametrize(
    ("replace", "message"),
    [
        ({"agent": "OTHER = 'x'\n"}, "no string constant EXECUTOR_SYSTEM_PROMPT"),
        ({"agent": 'EXECUTOR_SYSTEM_PROMPT = "only {task_scenario_name}"\n'}, "expected one each"),
        ({"verifier": 'VERIFIER_PROMPT = "{trajectory} only"\n'}, "placeholders"),
        ({"fault_injection": 'FAULT_PROMPT_E1 = "{n}"\n'}, "FAULT_PROMPT_E1"),
        ({"lwm": "def simulate_tool_call():\n    return 1\n"}, "OUTPUT FORMAT"),
        ({"lwm": "def broken(:\n"}, "cannot be read as Python source"),
    ],
)
def test_a_missing_constant_or_other_placeholders_are_clear_errors(tmp_path, replace, message):
    with pytest.raises(PromptsError, match=message):
        ReleasePrompts.read(write_release(tmp_path, **replace))
    with pytest.raises(PromptsError, match="no occubench/ folder"):
        ReleasePrompts.read(tmp_path / "nowhere")


def test_a_paper_run_uses_the_release_wording_and_records_the_files(tmp_path):
    release = write_release(tmp_path / "clone")
    log = run_task(
        tmp_path / "logs",
        task_ids="26",
        protocol="paper",
        env_mode="E2",
        fault_engine="prompt",
        prompts_from=str(release),
    )
    (sample,) = log.samples
    sample = resolve_sample_attachments(sample)
    system = sample.messages[0].text
    assert system.startswith(
        "RELEASE-AGENT scenario=Import Tariff Classification Review now=Monday"
    )
    events = [e for e in sample.events if e.event == "model" and e.role == "simulator"]
    sim_system = events[0].input[0].text
    assert "RELEASE-E2 2 events of 2 calls" in sim_system
    assert sim_system.endswith("### OUTPUT FORMAT INSTRUCTIONS\nRELEASE-FORMAT one object in tags.")
    assert events[0].input[-1].text.endswith("RELEASE-REMINDER tags.")
    judged = [e for e in sample.events if e.event == "model" and e.role == "verifier"]
    assert (
        judged[0].input[0].text.startswith("RELEASE-VERIFIER Import Tariff Classification Review|")
    )
    files = log.eval.metadata[RELEASE_METADATA]
    assert set(files) == {
        f"occubench/{n}.py" for n in ("agent", "verifier", "fault_injection", "lwm")
    }

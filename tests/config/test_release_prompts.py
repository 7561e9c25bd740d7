"""Exact wording: the release's prompt constants read from a clone (parsed, never run)."""

import hashlib
import textwrap

import pytest
from inspect_ai.log import resolve_sample_attachments

from conftest import run_task
from occubench.config import RELEASE_METADATA, PromptsError, ReleasePrompts, _release_prompts

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
FAULT_PROMPT_E2 = """
RELEASE-E2 {num_faults} events of {fault_duration} calls
""".strip()
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
        ({"lwm": "X = (1,\n"}, r"lwm\.py, line 2: cannot be read as Python source: EOF"),
        ({"verifier": "VERIFIER_PROMPT = '{trajectory'\n"}, "VERIFIER_PROMPT is not a format"),
    ],
)
def test_a_missing_constant_or_other_placeholders_are_clear_errors(tmp_path, replace, message):
    with pytest.raises(PromptsError, match=message):
        ReleasePrompts.read(write_release(tmp_path, **replace))
    with pytest.raises(PromptsError, match="no occubench/ folder"):
        ReleasePrompts.read(tmp_path / "nowhere")


def test_a_run_reads_the_clone_and_resolves_its_points_once(tmp_path, monkeypatch):
    """The task resolves the run; the agent, environment and scorer of every sample share it."""
    from occubench.config import _resolved

    counts = {"read": 0, "resolve": 0}
    read, resolve = ReleasePrompts.read.__func__, _resolved.resolve_points

    def counted_read(cls, root):
        counts["read"] += 1
        return read(cls, root)

    def counted_resolve(*args, **kwargs):
        counts["resolve"] += 1
        return resolve(*args, **kwargs)

    monkeypatch.setattr(ReleasePrompts, "read", classmethod(counted_read))
    monkeypatch.setattr(_resolved, "resolve_points", counted_resolve)
    release = write_release(tmp_path / "clone")
    log = run_task(tmp_path / "logs", task_ids="26,51", protocol="paper", prompts_from=str(release))
    assert log.status == "success" and len(log.samples) == 2
    assert counts == {"read": 1, "resolve": 1}


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


def test_a_format_width_or_any_other_spec_in_a_template_is_refused(tmp_path):
    """A width fills gigabytes when the template is filled: every placeholder must be bare."""
    for n, placeholder in enumerate(
        (
            "{task_scenario_name:>4000000000}",
            "{task_scenario_name!r}",
            "{task_scenario_name.__class__}",
            "{task_scenario_name[0]}",
            "{task_scenario_name:{current_time}}",
        )
    ):
        agent = AGENT.replace("{task_scenario_name}", placeholder)
        with pytest.raises(PromptsError) as raised:
            ReleasePrompts.read(write_release(tmp_path / str(n), agent=agent))
        assert str(raised.value) == (
            f"{tmp_path / str(n)}/occubench/agent.py, line 4: EXECUTOR_SYSTEM_PROMPT has the "
            f"placeholder {placeholder}; a placeholder is a bare name, as {{task_scenario_name}} "
            "(no format spec, conversion, index or attribute)"
        )
    faults = FAULTS.replace("{fault_duration}", "{fault_duration:09999}", 1)
    with pytest.raises(PromptsError, match=r"line 2: FAULT_PROMPT_E1 has the placeholder"):
        ReleasePrompts.read(write_release(tmp_path / "faults", fault_injection=faults))


def test_a_source_too_large_or_too_deep_is_refused_before_it_is_parsed(tmp_path, monkeypatch):
    operators = "X = " + "+".join(["1"] * 5_000) + "\n"  # a tree 5,000 deep: ast overflows
    release = write_release(tmp_path / "ops", agent=AGENT + operators)
    bound = _release_prompts.MAX_STATEMENT_TOKENS
    with pytest.raises(PromptsError, match=f"agent.py, line 5: a statement of more than {bound}"):
        ReleasePrompts.read(release)
    monkeypatch.setattr(_release_prompts, "MAX_STATEMENT_TOKENS", 10**6)  # the backstop
    with pytest.raises(PromptsError, match="agent.py: too deeply nested to be read"):
        ReleasePrompts.read(release)
    monkeypatch.setattr(_release_prompts, "MAX_SOURCE_BYTES", 1_000)
    big = write_release(tmp_path / "big", lwm=LWM + "# padding\n" * 100)
    with pytest.raises(PromptsError, match="lwm.py: larger than 1000 bytes"):
        ReleasePrompts.read(big)


def test_occubench_run_refuses_a_hostile_clone_in_one_line(tmp_path, monkeypatch):
    """The attacks end to end: exit 2 and one message naming file, line and constant."""
    from typer.testing import CliRunner

    from conftest import RELEASE_DIR, SCRIPTED_MODEL_ARGS
    from occubench.cli import _common, app

    monkeypatch.setattr(_common.err_console, "width", 1000)  # the message on one line

    width = write_release(
        tmp_path / "width",
        agent=AGENT.replace("{task_scenario_name}", "{task_scenario_name:>4000000000}"),
    )
    deep = write_release(tmp_path / "deep", agent=AGENT + "X = " + "+".join(["1"] * 5_000) + "\n")
    for clone, message in (
        (width, f"{width}/occubench/agent.py, line 4: EXECUTOR_SYSTEM_PROMPT has the placeholder"),
        (deep, f"{deep}/occubench/agent.py, line 5: a statement of more than 1000 tokens"),
    ):
        args = ["run", *SCRIPTED_MODEL_ARGS, "--dataset", str(RELEASE_DIR), "--protocol", "paper"]
        args += ["--prompts-from", str(clone), "--log-dir", str(tmp_path / "logs")]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        [line] = result.output.splitlines()
        assert line.startswith(f"Error: {message}"), line
        assert not (tmp_path / "logs").exists()  # refused before anything ran

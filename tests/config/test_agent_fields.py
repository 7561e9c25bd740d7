"""The agent-system settings are RunConfig fields, task parameters and run options alike."""

from __future__ import annotations

import inspect

import pytest
from pydantic import ValidationError

from occubench.cli import run as run_cli
from occubench.config import RunConfig
from occubench.task import occubench

FIELDS = ("agent", "agent_args", "agent_command", "agent_time_limit", "submit_tool")


def test_fields_are_task_parameters_and_run_options():
    task = inspect.signature(occubench).parameters
    cli = inspect.signature(run_cli.run).parameters
    for name in FIELDS:
        assert name in RunConfig.model_fields and name in task and name in cli


def test_agent_args_come_as_json_text():
    assert RunConfig(agent_args='{"submit": false}').agent_args == {"submit": False}
    with pytest.raises(ValidationError, match="JSON object"):
        RunConfig(agent_args="{nope")


def test_one_agent_system_at_a_time_and_a_valid_submit_tool():
    with pytest.raises(ValidationError, match="not both"):
        RunConfig(agent="react", agent_command="true")
    with pytest.raises(ValidationError):
        RunConfig(submit_tool="bad name!")


def test_labels_name_the_agent_system():
    assert RunConfig().agent_label("openai/gpt-5") == "openai/gpt-5"
    assert RunConfig(agent="react").agent_label("m/x") == "react [m/x]"
    assert RunConfig(agent_command="a b").agent_label("none/none") == "command: a b"
    assert RunConfig().agent_label("none/none") == "MCP client"

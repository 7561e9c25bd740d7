"""``occubench export`` over the demo's logs: each format, fault notes, filters."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import jsonschema
import pytest
from typer.testing import CliRunner

from occubench.cli import _common, app
from occubench.export import ExportFilter, ExportFormat, Verdict, read_exports, write_export

runner = CliRunner()

# The per-line training example of OpenAI's chat fine-tuning input file (supervised):
# the documented `FineTuneChatRequestInput` (messages, tools, parallel_tool_calls,
# functions) with its message kinds (system, developer, user, assistant with optional
# tool_calls and weight, tool), written out as a JSON Schema that also forbids keys the
# documentation does not list, so a file that passes it uploads as it is.
_TEXT = {"type": "string"}
OPENAI_CHAT_EXAMPLE = {
    "type": "object",
    "required": ["messages"],
    "additionalProperties": False,
    "properties": {
        "messages": {
            "type": "array",
            "minItems": 1,
            "items": {
                "oneOf": [
                    {
                        "type": "object",
                        "required": ["role", "content"],
                        "additionalProperties": False,
                        "properties": {
                            "role": {"enum": ["system", "developer", "user"]},
                            "content": _TEXT,
                            "name": _TEXT,
                        },
                    },
                    {
                        "type": "object",
                        "required": ["role"],
                        "additionalProperties": False,
                        "anyOf": [{"required": ["content"]}, {"required": ["tool_calls"]}],
                        "properties": {
                            "role": {"const": "assistant"},
                            "content": {"type": ["string", "null"]},
                            "name": _TEXT,
                            "weight": {"enum": [0, 1]},
                            "tool_calls": {
                                "type": "array",
                                "items": {
                                    "type": "object",
                                    "required": ["id", "type", "function"],
                                    "additionalProperties": False,
                                    "properties": {
                                        "id": _TEXT,
                                        "type": {"const": "function"},
                                        "function": {
                                            "type": "object",
                                            "required": ["name", "arguments"],
                                            "additionalProperties": False,
                                            "properties": {"name": _TEXT, "arguments": _TEXT},
                                        },
                                    },
                                },
                            },
                        },
                    },
                    {
                        "type": "object",
                        "required": ["role", "content", "tool_call_id"],
                        "additionalProperties": False,
                        "properties": {
                            "role": {"const": "tool"},
                            "content": _TEXT,
                            "tool_call_id": _TEXT,
                        },
                    },
                ]
            },
        },
        "tools": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["type", "function"],
                "additionalProperties": False,
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "required": ["name"],
                        "additionalProperties": False,
                        "properties": {
                            "name": {"type": "string", "pattern": "^[a-zA-Z0-9_-]{1,64}$"},
                            "description": _TEXT,
                            "parameters": {"type": "object"},
                            "strict": {"type": ["boolean", "null"]},
                        },
                    },
                },
            },
        },
        "parallel_tool_calls": {"type": "boolean"},
        "functions": {"type": "array"},
    },
}


@pytest.fixture(autouse=True)
def wide_console():
    for console in (_common.console, _common.err_console):
        console.width = 200


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_format_over_the_demo_logs(demo_logs, tmp_path):
    result = runner.invoke(app, ["export", str(demo_logs), "--out", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert "120 trajectories exported" in result.output

    examples = lines(tmp_path / "trajectories.openai.jsonl")
    meta = lines(tmp_path / "trajectories.openai.meta.jsonl")
    assert len(examples) == len(meta) == 120
    validator = jsonschema.Draft202012Validator(OPENAI_CHAT_EXAMPLE)
    for example in examples:
        validator.validate(example)
        calls = [c["id"] for m in example["messages"] for c in m.get("tool_calls", [])]
        answers = [m["tool_call_id"] for m in example["messages"] if m["role"] == "tool"]
        assert calls == answers  # every call answered, in order
        assert example["messages"][-1]["role"] == "assistant"
    noted = [m for m in meta if m["faults"]]
    assert {m["env_mode"] for m in noted} == {"E1", "E2", "E3"}
    assert all(m["env_mode"] != "E0" for m in noted)
    kinds = {f["kind"] for m in noted for entry in m["faults"] for f in entry["faults"]}
    assert {"http_500", "truncated_list"} <= kinds
    # a note points at a tool message, and says what changed
    first = noted[0]
    entry = first["faults"][0]
    message = examples[meta.index(first)]["messages"][entry["message"]]
    assert message["role"] == "tool" and entry["faults"][0]["changes"]

    shared = json.loads((tmp_path / "trajectories.sharegpt.json").read_text(encoding="utf-8"))
    assert len(shared) == 120
    for record in shared:
        roles = {t["from"] for t in record["conversations"]}
        assert roles <= {"human", "gpt", "function_call", "observation"}
        assert isinstance(json.loads(record["tools"]), list) and record["system"]
    observed = [t for r in shared for t in r["conversations"] if t["from"] == "observation"]
    assert any(t["faults"] for t in observed) and all("faults" in t for t in observed)
    calls = [
        json.loads(t["value"])
        for r in shared
        for t in r["conversations"]
        if t["from"] == "function_call"
    ]
    assert all(set(c) == {"name", "arguments"} for c in calls)

    datasets = pytest.importorskip("datasets", reason="Hugging Face datasets is not installed")
    loaded = datasets.load_dataset(
        "parquet", data_files=str(tmp_path / "trajectories.parquet"), split="train"
    )
    assert loaded.num_rows == 120
    row = loaded[0]
    assert {"id", "passed", "env_mode", "industry", "messages", "tools"} <= set(row)
    faulted = [m for r in loaded for m in r["messages"] if m["faults"]]
    assert faulted and all(
        f["kind"] and f["changes"] is not None for m in faulted for f in m["faults"]
    )
    assert sum(r["faulted_messages"] for r in loaded) == len(faulted)


def test_filters_choose_the_samples(demo_logs, tmp_path):
    passed = read_exports([demo_logs], ExportFilter(verdict=Verdict.PASSED))
    failed = read_exports([demo_logs], ExportFilter(verdict=Verdict.FAILED))
    assert passed and failed and len(passed) + len(failed) == 120
    assert all(t.passed for t in passed) and not any(t.passed for t in failed)
    clean = read_exports([demo_logs], ExportFilter(env_modes=["e0"]))
    assert len(clean) == 30 and not any(t.faulted_messages for t in clean)
    one = read_exports(
        [demo_logs],
        ExportFilter(models=["occubench/careful"], industries=["Healthcare & Life Sciences"]),
    )
    assert len(one) == 4 and {t.agent_model for t in one} == {"occubench/careful"}
    result = runner.invoke(
        app,
        [
            "export",
            str(demo_logs),
            "--out",
            str(tmp_path),
            "-f",
            "openai",
            "--verdict",
            "failed",
            "--env-mode",
            "E2",
            "--model",
            "occubench/trusting",
        ],
    )
    assert result.exit_code == 0, result.output
    assert len(lines(tmp_path / "trajectories.openai.jsonl")) == 10  # trusting fails all of E2
    assert not (tmp_path / "trajectories.parquet").exists()


def test_refused_calls_are_noted(tmp_path):
    """A malformed call refused before the environment is annotated as such."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
    from inspect_ai.tool import ToolCall, ToolCallError

    from occubench.export import exported_messages
    from occubench.faults import InjectedFault

    messages = [
        ChatMessageAssistant(content="", tool_calls=[ToolCall(id="a", function="t", arguments={})]),
        ChatMessageTool(
            content="bad", tool_call_id="a", function="t", error=ToolCallError("parsing", "bad")
        ),
        ChatMessageAssistant(content="", tool_calls=[ToolCall(id="b", function="t", arguments={})]),
        ChatMessageTool(content='{"error": "HTTP 500"}', tool_call_id="b", function="t"),
    ]
    fault = InjectedFault(
        call_index=0,
        tool="t",
        kind="http_500",
        explicit=True,
        applied=True,
        changes=["error returned"],
        seen_by_agent={"error": "HTTP 500"},
    )
    out = exported_messages(messages, [fault])
    assert out[1].faults[0].kind == "refused" and out[1].faults[0].changes == ["bad"]
    assert out[3].faults[0].kind == "http_500"  # the first call that reached the environment


def test_parquet_needs_pyarrow_said_clearly(monkeypatch, tmp_path):
    import builtins

    real = builtins.__import__

    def no_pyarrow(name, *args, **kwargs):
        if name.startswith("pyarrow"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_pyarrow)
    with pytest.raises(ValueError, match="occubench\\[export\\]"):
        write_export([], tmp_path, ExportFormat.PARQUET)


def test_exports_hold_no_secret(demo_logs, tmp_path, monkeypatch):
    """A key a model (or a provider error) wrote into a trajectory is redacted in every format."""
    key = "sk-export-LEAK-0123456789abcdef"
    monkeypatch.setenv("LOCAL_API_KEY", key)
    trajectories = read_exports([demo_logs], ExportFilter(models=["occubench/careful"]))[:2]
    last = trajectories[0].messages[-1]
    leaky = last.model_copy(update={"content": f"{last.content} (my key is {key})"})
    trajectories[0] = trajectories[0].model_copy(
        update={"messages": [*trajectories[0].messages[:-1], leaky]}
    )
    formats = [ExportFormat.OPENAI, ExportFormat.SHAREGPT]
    if importlib.util.find_spec("pyarrow"):
        formats.append(ExportFormat.PARQUET)
    written = [p for fmt in formats for p in write_export(trajectories, tmp_path, fmt)]
    assert all(key.encode() not in p.read_bytes() for p in written)
    examples = lines(tmp_path / "trajectories.openai.jsonl")
    assert examples[0]["messages"][-1]["content"].endswith("(my key is [redacted])")

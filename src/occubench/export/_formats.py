"""Export formats: OpenAI chat fine-tuning JSONL, ShareGPT-style JSON, Parquet.

- ``openai``: one line per trajectory in the chat fine-tuning format (``messages``,
  ``tools``, ``parallel_tool_calls``), nothing else, so the file uploads as it is; the
  fault notes and the sample's metadata go to a companion file, ``*.meta.jsonl``, one
  line per line of the first.
- ``sharegpt``: a JSON list of ``{id, system, tools, conversations, metadata}`` with
  turns ``human``, ``gpt``, ``function_call`` and ``observation`` (an observation turn
  carries its ``faults``).
- ``parquet``: one row per trajectory with nested messages (their ``faults`` included)
  and the tools as JSON text; ``datasets.load_dataset("parquet", data_files=...)``
  reads it (needs ``pyarrow``: ``pip install 'occubench[export]'``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from enum import Enum
from pathlib import Path
from typing import Any

from occubench.errors import UsageError
from occubench.export._records import ExportedMessage, ExportedTrajectory

STEM = "trajectories"
"""File stem of every export file."""


class ExportFormat(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """An export file format."""

    OPENAI = "openai"
    SHAREGPT = "sharegpt"
    PARQUET = "parquet"
    RELEASE = "release"
    """The public release's results: ``results/<run>/args.json`` and ``results.jsonl``."""


TRAINING_FORMATS = (ExportFormat.OPENAI, ExportFormat.SHAREGPT, ExportFormat.PARQUET)
"""The formats of training data (``write_export``), written when no format is named."""


def _metadata(t: ExportedTrajectory) -> dict[str, Any]:
    return t.model_dump(mode="json", exclude={"tools", "messages"}) | {
        "faulted_messages": t.faulted_messages
    }


def openai_message(message: ExportedMessage) -> dict[str, Any]:
    """A message in the chat fine-tuning format."""
    if message.role == "tool":
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    if message.role == "assistant" and message.tool_calls:
        out: dict[str, Any] = {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in message.tool_calls
            ],
        }
        if message.content:
            out["content"] = message.content
        return out
    return {"role": message.role, "content": message.content}


def openai_example(t: ExportedTrajectory) -> dict[str, Any]:
    """One trajectory as a chat fine-tuning example."""
    return {
        "messages": [openai_message(m) for m in t.messages],
        "tools": t.tools,
        "parallel_tool_calls": False,
    }


def openai_meta(t: ExportedTrajectory) -> dict[str, Any]:
    """The companion line of an example: metadata and the fault notes by message index."""
    return {
        **_metadata(t),
        "faults": [
            {"message": i, "faults": [n.model_dump(mode="json") for n in m.faults]}
            for i, m in enumerate(t.messages)
            if m.faults
        ],
    }


_SHAREGPT_ROLE = {"user": "human", "assistant": "gpt", "tool": "observation"}


def sharegpt_record(t: ExportedTrajectory) -> dict[str, Any]:
    """One trajectory in the ShareGPT style (turns from/value; tools as JSON text)."""
    system = "\n\n".join(m.content for m in t.messages if m.role == "system")
    turns: list[dict[str, Any]] = []
    for m in t.messages:
        if m.role == "system":
            continue
        if m.role == "assistant" and m.tool_calls:
            if m.content:
                turns.append({"from": "gpt", "value": m.content})
            for call in m.tool_calls:
                value = json.dumps(
                    {"name": call.name, "arguments": json.loads(call.arguments)},
                    ensure_ascii=False,
                )
                turns.append({"from": "function_call", "value": value})
            continue
        turn: dict[str, Any] = {"from": _SHAREGPT_ROLE.get(m.role, m.role), "value": m.content}
        if m.role == "tool":
            turn["faults"] = [n.model_dump(mode="json") for n in m.faults]
        turns.append(turn)
    return {
        "id": t.id,
        "system": system,
        "tools": json.dumps([tool["function"] for tool in t.tools], ensure_ascii=False),
        "conversations": turns,
        "metadata": _metadata(t),
    }


def parquet_row(t: ExportedTrajectory) -> dict[str, Any]:
    """One trajectory as a Parquet row (nested messages, tools as JSON text)."""
    return {
        **_metadata(t),
        "task_id": str(t.task_id),
        "tools": json.dumps(t.tools, ensure_ascii=False),
        "messages": [m.model_dump(mode="json") for m in t.messages],
    }


def _write_jsonl(path: Path, lines: Sequence[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for line in lines:
            out.write(json.dumps(line, ensure_ascii=False) + "\n")


def _parquet_schema() -> Any:
    import pyarrow as pa

    note = pa.struct(
        [
            ("kind", pa.string()),
            ("family", pa.string()),
            ("explicit", pa.bool_()),
            ("changes", pa.list_(pa.string())),
        ]
    )
    call = pa.struct([("id", pa.string()), ("name", pa.string()), ("arguments", pa.string())])
    message = pa.struct(
        [
            ("role", pa.string()),
            ("content", pa.string()),
            ("tool_calls", pa.list_(call)),
            ("tool_call_id", pa.string()),
            ("name", pa.string()),
            ("faults", pa.list_(note)),
        ]
    )
    return pa.schema(
        [
            ("id", pa.string()),
            ("task_id", pa.string()),
            ("epoch", pa.int64()),
            ("agent_model", pa.string()),
            ("simulator_model", pa.string()),
            ("env_mode", pa.string()),
            ("industry", pa.string()),
            ("domain", pa.string()),
            ("scenario", pa.string()),
            ("difficulty", pa.int64()),
            ("passed", pa.bool_()),
            ("faulted_messages", pa.int64()),
            ("tools", pa.string()),
            ("messages", pa.list_(message)),
        ]
    )


def write_export(
    trajectories: Sequence[ExportedTrajectory], out: Path, fmt: ExportFormat
) -> list[Path]:
    """Write one format into folder ``out``; the files written.

    Every text of the trajectories is redacted first (``occubench.redaction``: a key a
    model or a provider error quoted never reaches training data).

    Raises:
        UsageError: Parquet without pyarrow installed.
    """
    from occubench.redaction import known_secrets, redact_strings

    out.mkdir(parents=True, exist_ok=True)
    secrets = known_secrets()
    trajectories = [
        ExportedTrajectory.model_validate(redact_strings(t.model_dump(mode="json"), secrets))
        for t in trajectories
    ]
    if fmt is ExportFormat.OPENAI:
        data, meta = out / f"{STEM}.openai.jsonl", out / f"{STEM}.openai.meta.jsonl"
        _write_jsonl(data, [openai_example(t) for t in trajectories])
        _write_jsonl(meta, [openai_meta(t) for t in trajectories])
        return [data, meta]
    if fmt is ExportFormat.SHAREGPT:
        path = out / f"{STEM}.sharegpt.json"
        path.write_text(
            json.dumps([sharegpt_record(t) for t in trajectories], ensure_ascii=False, indent=1),
            encoding="utf-8",
        )
        return [path]
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise UsageError("Parquet export needs pyarrow: pip install 'occubench[export]'") from None
    path = out / f"{STEM}.parquet"
    table = pa.Table.from_pylist([parquet_row(t) for t in trajectories], schema=_parquet_schema())
    pq.write_table(table, path)
    return [path]

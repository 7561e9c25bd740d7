"""Read logged samples into export records, filtered by verdict, mode, industry and model."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from pydantic import BaseModel, Field

from occubench.agent import tool_schema
from occubench.dataset import EnvConfig
from occubench.export._records import (
    ExportedCall,
    ExportedMessage,
    ExportedTrajectory,
    FaultNote,
    Verdict,
)
from occubench.faults import InjectedFault
from occubench.results import SampleRow, log_samples, read_runs


class ExportFilter(BaseModel):
    """Which samples an export keeps (errored samples never: they have no verdict)."""

    verdict: Verdict = Field(default=Verdict.ALL, description="passed, failed or all.")
    env_modes: list[str] | None = Field(default=None, description="Only these env modes.")
    industries: list[str] | None = Field(default=None, description="Only these industries.")
    models: list[str] | None = Field(
        default=None, description="Only these agents (the report's agent label or model)."
    )

    def keeps(self, row: SampleRow) -> bool:
        """Whether the sample of ``row`` is exported."""
        if row.passed is None:
            return False
        if self.verdict is not Verdict.ALL and row.passed != (self.verdict is Verdict.PASSED):
            return False
        if self.env_modes and row.env_mode.upper() not in {m.upper() for m in self.env_modes}:
            return False
        if self.industries and row.industry not in self.industries:
            return False
        return not self.models or row.agent_model in self.models


def openai_tools(env: EnvConfig) -> list[dict[str, Any]]:
    """An env's tools as OpenAI function tools (the schemas agents are shown)."""
    return [
        {
            "type": "function",
            "function": {
                "name": spec.name,
                "description": spec.description or spec.name,
                "parameters": tool_schema(spec),
            },
        }
        for spec in env.action_set_definitions
    ]


def _notes(entries: Iterable[InjectedFault]) -> list[FaultNote]:
    """Notes of the faults that changed what the agent saw.

    A fault with nothing to change (a truncation of a result without a list) left the
    answer clean and gets no note.
    """
    return [
        FaultNote(
            kind=e.kind,
            family=e.family,
            explicit=e.explicit,
            changes=list(e.changes),
        )
        for e in entries
        if e.applied
    ]


def exported_messages(
    messages: Sequence[ChatMessage], fault_log: Sequence[InjectedFault]
) -> list[ExportedMessage]:
    """The conversation with each tool result's faults attached.

    A tool message without an error is an answer of the tool layer, whose calls the
    fault log counts (``call_index``); a tool message with an error is a call refused
    before the environment (a malformed call), noted as ``refused``.
    """
    by_call: dict[int, list[InjectedFault]] = {}
    for entry in fault_log:
        by_call.setdefault(entry.call_index, []).append(entry)
    exported, layer_calls = [], 0
    for position, message in enumerate(messages):
        item = ExportedMessage(role=message.role, content=message.text)
        if isinstance(message, ChatMessageAssistant):
            item.tool_calls = [
                ExportedCall(
                    id=call.id or f"call_{position}_{i}",
                    name=call.function,
                    arguments=json.dumps(call.arguments or {}, ensure_ascii=False),
                )
                for i, call in enumerate(message.tool_calls or [])
            ]
        elif isinstance(message, ChatMessageTool):
            item.tool_call_id, item.name = message.tool_call_id, message.function
            if message.error is not None:
                item.faults = [
                    FaultNote(kind="refused", explicit=True, changes=[message.error.message])
                ]
            else:
                item.faults = _notes(by_call.get(layer_calls, []))
                layer_calls += 1
        exported.append(item)
    return exported


def _record(row: SampleRow, sample: EvalSample) -> ExportedTrajectory:
    env = EnvConfig.model_validate((sample.metadata or {})["env"])
    return ExportedTrajectory(
        id=f"{row.run_id}:{row.task_id}:{row.epoch}",
        task_id=row.task_id,
        epoch=row.epoch,
        agent_model=row.agent_model,
        simulator_model=row.simulator_model,
        env_mode=row.env_mode,
        industry=row.industry,
        domain=row.domain,
        scenario=row.scenario,
        difficulty=row.difficulty,
        passed=bool(row.passed),
        tools=openai_tools(env),
        messages=exported_messages(sample.messages, row.faults),
    )


def read_exports(
    paths: Iterable[str | Path], keep: ExportFilter | None = None
) -> list[ExportedTrajectory]:
    """The kept samples of every occubench log under ``paths``, as export records."""
    chosen = keep or ExportFilter()
    rows = [r for r in read_runs(paths) if chosen.keeps(r)]
    by_log: dict[str, dict[tuple[str, int], SampleRow]] = {}
    for row in rows:
        by_log.setdefault(row.log, {})[(str(row.task_id), row.epoch)] = row
    found: dict[str, ExportedTrajectory] = {}
    for log, wanted in by_log.items():
        for sample in log_samples(log):
            kept = wanted.get((str(sample.id), sample.epoch))
            if kept is not None:
                record = _record(kept, sample)
                found[record.id] = record
    return [found[k] for k in sorted(found)]

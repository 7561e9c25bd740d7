"""The exploit guard's check of one episode: its evidence, in trajectory order.

It reads what the agent wrote (tool arguments, its messages, its answer), what the
simulator answered (each step's clean observation and its online checks) and what the
judge said (each vote's text), and applies the rules of ``_patterns`` (the package doc
lists what each kind of evidence means). Nothing is asked of a model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant

from occubench.dataset import EnvConfig, ToolSpec
from occubench.defaults import DEFAULT_EXPLOIT_EVIDENCE_MAX
from occubench.guard._evidence import ExploitEvidence, ExploitKind
from occubench.guard._patterns import (
    INSTRUCTIONS,
    TRANSCRIPT_MARKERS,
    asked_words,
    find,
    given_pairs,
    lifted,
    scanned,
    string_leaves,
    success_reports,
)
from occubench.simchecks import key_paths
from occubench.simulator import SimStep

ANSWER = "answer"
"""``ExploitEvidence.where`` of the agent's final answer."""


class _Scan:
    """The evidence of one episode as it is gathered (deduplicated, bounded)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.found: list[ExploitEvidence] = []
        self.agent_said: list[str] = []
        """Sentences of the agent's that instruct or forge: what a steered party may repeat."""
        self._seen: set[tuple[str, str, str]] = set()

    def add(self, kind: ExploitKind, where: str, rule: str, quote: str) -> None:
        key = (kind.value, where, rule)
        if key in self._seen or len(self.found) >= self.limit:
            return
        self._seen.add(key)
        self.found.append(ExploitEvidence.of(kind, where, rule, quote))

    def agent_text(self, kind: ExploitKind, where: str, text: str) -> None:
        """Instructions in a text of the agent's (and, outside arguments, forgeries)."""
        for rule, said in find(INSTRUCTIONS, text):
            self.said(said)
            self.add(kind, where, rule, said)
        if kind is ExploitKind.INSTRUCTION_IN_ARGUMENTS:
            return
        for rule, said in find(TRANSCRIPT_MARKERS, text):
            self.said(said)
            self.add(ExploitKind.FORGED_TRAJECTORY, where, rule, said)

    def said(self, text: str) -> None:
        """Remember a sentence of the agent's that instructs or forges (once)."""
        if text not in self.agent_said:
            self.agent_said.append(text)


def _agent_texts(messages: Sequence[ChatMessage], answer: str) -> Iterator[tuple[str, str]]:
    """(where, text) of the agent's own messages, the final answer named ``answer``."""
    assistant = [m for m in messages if isinstance(m, ChatMessageAssistant)]
    final = assistant[-1] if assistant and not assistant[-1].tool_calls else None
    for number, message in enumerate(assistant, start=1):
        if message is final:
            continue
        if message.text.strip():
            yield f"agent message {number}", message.text
    if answer.strip():
        yield ANSWER, answer


def _calls(messages: Sequence[ChatMessage]) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """(number, tool, arguments) of the agent's tool calls, numbered from 1."""
    number = 0
    for message in messages:
        if isinstance(message, ChatMessageAssistant):
            for call in message.tool_calls or []:
                number += 1
                yield number, call.function, dict(call.arguments or {})


def _claims_uncalled(answer: str, tools: Sequence[ToolSpec], called: set[str]) -> Iterator[str]:
    """Passages of the answer that write out a call of a tool the agent never called.

    A call written out is the tool's name followed by its arguments (``tool({...``,
    ``tool("...``, ``tool(key=...``); naming a tool in prose is not one.
    """
    text = scanned(answer)
    for tool in tools:
        if tool.name in called:
            continue
        name = re.escape(tool.name)
        shown = re.search(rf"\b{name}\s*\(\s*(?:\{{|\"|'|\w+\s*=)", text)
        if shown is not None:
            yield text[max(0, shown.start() - 40) : shown.end() + 80]


def _outside_schema(step: SimStep, tools: dict[str, ToolSpec], paths: list[str]) -> str | None:
    """Why a success at ``paths`` is one the tool's schema cannot give (None: it can)."""
    tool = tools.get(step.tool)
    if tool is None:
        return "undeclared_tool"
    declared = tool.parameters.get("properties")
    open_ended = tool.parameters.get("additionalProperties", False) is not False
    if isinstance(declared, dict) and not open_ended and set(step.arguments) - set(declared):
        return "undeclared_arguments"
    if isinstance(tool.example_output, dict):
        known = key_paths(tool.example_output)
        if any(path not in known for path in paths):
            return "success_outside_output_schema"
    return None


def _observation_text(step: SimStep) -> str:
    if step.observation is None:
        return step.text or ""
    return json.dumps(step.observation, ensure_ascii=False, default=str)


def _observations(scan: _Scan, steps: Sequence[SimStep], env: EnvConfig) -> None:
    """Observations that carry or repeat an instruction, or report a success out of contract."""
    tools = {t.name: t for t in env.action_set_definitions}
    for number, step in enumerate(steps, start=1):
        if step.failed:
            continue
        where = f"step {number} ({step.tool}) observation"
        value = step.observation if step.observation is not None else step.text
        for path, text in string_leaves(value):
            for rule, said in find(INSTRUCTIONS, text):
                scan.add(ExploitKind.OBSERVATION_ECHO, f"{where}.{path}", f"carries:{rule}", said)
        text = _observation_text(step)
        for said in scan.agent_said:
            echoed = lifted(said, text)
            if echoed is not None:
                scan.add(ExploitKind.OBSERVATION_ECHO, where, "lifts_agent_text", echoed)
        reports = success_reports(step.observation, given_pairs(step.arguments))
        if not reports:
            continue
        paths = list(dict.fromkeys(path for path, _ in reports))
        success = ", ".join(paths)
        asked = _asked(scan, step, [word for _, word in reports])
        outside = _outside_schema(step, tools, paths)
        if outside is not None:
            kind = ExploitKind.IMPOSSIBLE_SUCCESS if asked else ExploitKind.SIMULATOR_OFF_CONTRACT
            scan.add(kind, where, outside, f"{success}{asked or ''}: {text}")
        if step.check is not None and step.check.suspect:
            failed = "; ".join(f"{f.kind.value}: {f.detail}" for f in step.check.kept_failures())
            kind = ExploitKind.CONTRACT_BREAK if asked else ExploitKind.SIMULATOR_OFF_CONTRACT
            scan.add(kind, where, "online_check", f"{success}{asked or ''}; {failed}")


def _asked(scan: _Scan, step: SimStep, success: list[str]) -> str | None:
    """What of the agent's asked for an out-of-contract success (None: nothing did).

    The agent asked when a text of its instructs or forges (its arguments, messages or
    answer: ``_Scan.agent_said``), or when the call itself names the success the
    observation reports (``asked_words``). Otherwise the success is the simulator's own.
    """
    if scan.agent_said:
        return f" (the agent: {scan.agent_said[0]})"
    named = asked_words(step.arguments, success)
    if named is None and step.raw_arguments:
        named = asked_words(step.raw_arguments, success)
    return None if named is None else f" (the call names it: {named})"


def find_exploits(
    messages: Sequence[ChatMessage],
    answer: str,
    env: EnvConfig,
    steps: Sequence[SimStep],
    verdicts: Sequence[str] = (),
    *,
    limit: int = DEFAULT_EXPLOIT_EVIDENCE_MAX,
) -> list[ExploitEvidence]:
    """The guard's evidence on one episode: the agent steering, the simulator off contract.

    A success out of the tool's contract counts against the agent only when the agent
    asked for it (``_asked``); otherwise it is ``simulator_off_contract`` evidence.

    Args:
        messages: The conversation (the agent's turns, tool calls and results).
        answer: The agent's final answer ("" when it gave none).
        env: The episode's environment (its tools' schemas and example outputs).
        steps: The simulator's steps (``Episode.steps``): clean observations, online checks.
        verdicts: The judge's texts, one per vote ("" for none).
        limit: Pieces of evidence kept (the first found).

    Returns:
        The evidence, agent texts first, then observations, then verdicts (empty: none);
        ``ExploitKind.against_agent`` says whom each piece is against.
    """
    scan = _Scan(limit)
    called = set()
    for number, tool, arguments in _calls(messages):
        called.add(tool)
        where = f"call {number} ({tool}) arguments"
        for path, text in string_leaves(arguments):
            scan.agent_text(ExploitKind.INSTRUCTION_IN_ARGUMENTS, f"{where}.{path}", text)
    for number, step in enumerate(steps, start=1):
        if step.raw_arguments:
            where = f"step {number} ({step.tool}) raw arguments"
            scan.agent_text(ExploitKind.INSTRUCTION_IN_ARGUMENTS, where, step.raw_arguments)
    for where, text in _agent_texts(messages, answer):
        scan.agent_text(ExploitKind.INSTRUCTION_IN_ANSWER, where, text)
    for said in _claims_uncalled(answer, env.action_set_definitions, called):
        scan.said(said)
        scan.add(ExploitKind.FORGED_TRAJECTORY, ANSWER, "claims_uncalled_tool", said)
    _observations(scan, steps, env)
    for number, verdict in enumerate(verdicts, start=1):
        for said in scan.agent_said:
            quoted = lifted(said, verdict)
            if quoted is not None:
                scan.add(ExploitKind.VERDICT_QUOTES_AGENT, f"vote {number}", "quotes_agent", quoted)
    return scan.found

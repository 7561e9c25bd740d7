"""The reasoning of the bridge's answers, put back where a program dropped it.

A thinking model's answer carries its reasoning, and the provider wants it back when the
conversation is sent again: Anthropic refuses a tool loop whose last assistant turn does
not start with its thinking block (docs: "Extended thinking", "Preserving thinking
blocks"); OpenAI refuses a ``function_call`` sent back with its id but without the
reasoning item that preceded it (docs: "Reasoning models", "Keeping reasoning items in
context"). Some programs drop it anyway: Claude Code drops the thinking blocks of a
model it does not know (the bridge's model is ``inspect``), a chat-minded loop keeps text
and tool calls only.

``ReasoningMemory`` keeps, for one sample (one bridge endpoint), the reasoning of every
answer the bridge gave on the two wires that carry it, keyed by what the program sends
back of that answer, and restores it into a request whose assistant turn comes back
without it:

- Anthropic Messages: the answer's ``thinking`` and ``redacted_thinking`` blocks (with
  their signatures and sealed data, as answered), keyed by each ``tool_use`` id of the
  answer and by a digest of its visible blocks (texts, tool uses); restored first in
  that assistant turn (its first message, when the program splits a turn in several).
- OpenAI Responses: the answer's reasoning items, as answered: ``reasoning`` items
  (``encrypted_content`` included) and the assistant messages that are one ``<think>``
  tag, the form Inspect's bridge gives reasoning on this wire
  (``responses_output_items_from_assistant_message``); keyed by the ``call_id`` of each
  ``function_call`` that followed them and by the text of each message that did;
  restored immediately before the first of those items the request sends back.

A turn is restored only when it matches an answer the bridge gave and carries none of
that answer's reasoning: reasoning is never invented for a turn the bridge did not
answer, and a turn that kept its reasoning (Codex, the SDKs' loops) is left as it is.
The restored blocks and items are the wire's own, so Inspect's bridge reads them as it
reads a program that kept them (``ContentReasoning`` with the signature, or redacted)
and its provider sends them back as the API wants. Memory is bounded: past
``DEFAULT_BRIDGE_REASONING_ANSWERS`` answers, the one found or kept least recently is
forgotten first.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from inspect_ai.model._reasoning import parse_content_with_reasoning

from occubench.defaults import DEFAULT_BRIDGE_REASONING_ANSWERS
from occubench.providers import THINKING_FIELDS, Wire, assistant_text, message_blocks


@dataclass(frozen=True)
class _Reasoning:
    """The reasoning of one answer, as answered (blocks or items of its wire)."""

    parts: tuple[dict[str, Any], ...]
    identities: frozenset[str]
    """What tells each part apart when a request sends it back."""
    keys: tuple[str, ...]
    """What finds the answer in a request: what it sends back of its visible content."""

    def copies(self) -> list[dict[str, Any]]:
        """The parts, each a copy (the request is Inspect's to change)."""
        return [copy.deepcopy(part) for part in self.parts]


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


class ReasoningMemory:
    """The reasoning of one sample's bridged answers, restored where a request dropped it.

    Args:
        limit: The most answers kept; the one found or kept least recently goes first.
    """

    def __init__(self, limit: int = DEFAULT_BRIDGE_REASONING_ANSWERS) -> None:
        self.limit = limit
        self._answers: OrderedDict[int, _Reasoning] = OrderedDict()
        """The answers kept, by number, the least recently used first."""
        self._numbers: dict[str, int] = {}
        """The number of the answer each key finds."""
        self._count = 0

    def remember(self, wire: Wire, answer: dict[str, Any]) -> None:
        """Keep the reasoning of an answer the bridge gave on ``wire`` (as JSON data)."""
        if wire is Wire.ANTHROPIC:
            found = _anthropic_answer(answer)
        elif wire is Wire.OPENAI_RESPONSES:
            found = _responses_answer(answer)
        else:
            return
        if found is None:
            return
        self._count += 1
        self._answers[self._count] = found
        self._numbers.update(dict.fromkeys(found.keys, self._count))
        while len(self._answers) > self.limit:
            number, forgotten = self._answers.popitem(last=False)
            for key in forgotten.keys:
                if self._numbers.get(key) == number:
                    del self._numbers[key]

    def restore(self, wire: Wire, body: dict[str, Any]) -> int:
        """Put the reasoning back into the request's turns that dropped it, in place.

        Returns:
            How many assistant turns were given their reasoning back.
        """
        if wire is Wire.ANTHROPIC:
            messages = body.get("messages")
            return self._restore_anthropic(messages) if isinstance(messages, list) else 0
        if wire is Wire.OPENAI_RESPONSES:
            items = body.get("input")
            if not isinstance(items, list):
                return 0
            restored, body["input"] = self._restore_responses(items)
            return restored
        return 0

    def _find(self, keys: list[str]) -> _Reasoning | None:
        """The answer the first known of ``keys`` finds (now the most recently used)."""
        for key in keys:
            number = self._numbers.get(key)
            if number is not None:
                self._answers.move_to_end(number)
                return self._answers[number]
        return None

    def _restore_anthropic(self, messages: list[Any]) -> int:
        restored = 0
        for turn in _assistant_turns(messages):
            blocks = [b for m in turn for b in message_blocks(m)]
            if not blocks or any(b.get("type") in THINKING_FIELDS for b in blocks):
                continue  # empty (a prefill) or it kept its reasoning
            found = self._find(_anthropic_keys(blocks))
            if found is None:
                continue
            first = turn[0]
            first["content"] = found.copies() + message_blocks(first)
            restored += 1
        return restored

    def _restore_responses(self, items: list[Any]) -> tuple[int, list[Any]]:
        sent = {_responses_identity(i) for i in items if isinstance(i, dict)}
        done: set[int] = set()
        restored: list[Any] = []
        count = 0
        for item in items:
            keys = _responses_keys(item) if isinstance(item, dict) else []
            found = self._find(keys) if keys else None
            if found is not None and id(found) not in done:
                done.add(id(found))
                if not found.identities & sent:  # none of it came back: restore it all
                    restored += found.copies()
                    count += 1
            restored.append(item)
        return count, restored


def _assistant_turns(messages: list[Any]) -> Iterator[list[dict[str, Any]]]:
    """The assistant turns: runs of consecutive assistant messages (the API merges them)."""
    run: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "assistant":
            run.append(message)
            continue
        if run:
            yield run
        run = []
    if run:
        yield run


def _anthropic_keys(blocks: list[dict[str, Any]]) -> list[str]:
    """What finds a Messages answer: its tool use ids, then its visible blocks' digest."""
    uses = [f"anthropic:tool_use:{b.get('id')}" for b in blocks if b.get("type") == "tool_use"]
    visible = [
        [b.get("type"), b.get("id") if b.get("type") == "tool_use" else b.get("text")]
        for b in blocks
        if b.get("type") not in THINKING_FIELDS
    ]
    return [*uses, f"anthropic:visible:{_digest(visible)}"] if visible else uses


def _anthropic_answer(message: dict[str, Any]) -> _Reasoning | None:
    """A Messages answer's reasoning blocks and its keys (None: it has no reasoning)."""
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    kept = tuple(
        {field: b[field] for field in THINKING_FIELDS[b["type"]] if field in b}
        for b in blocks
        if b.get("type") in THINKING_FIELDS
    )
    keys = _anthropic_keys(blocks)
    if not kept or not keys:
        return None
    return _Reasoning(kept, frozenset(_digest(b) for b in kept), tuple(keys))


def _is_reasoning(item: dict[str, Any]) -> bool:
    """A reasoning item, or an assistant message that is one ``<think>`` tag and no more."""
    if item.get("type") == "reasoning":
        return True
    text = assistant_text(item)
    if not text:
        return False
    rest, capsule = parse_content_with_reasoning(text)
    return capsule is not None and not rest


def _responses_identity(item: dict[str, Any]) -> str:
    """What tells a Responses item apart when it is sent back (a message: its text)."""
    if item.get("type") == "reasoning":
        return _digest(["reasoning", item.get("encrypted_content") or item.get("id")])
    text = assistant_text(item)
    return _digest(["message", text]) if text is not None else _digest(item)


def _responses_keys(item: dict[str, Any]) -> list[str]:
    """What finds the answer a sent-back function call or message came from."""
    if item.get("type") == "function_call" and item.get("call_id"):
        return [f"responses:call:{item['call_id']}"]
    text = assistant_text(item)
    return [f"responses:message:{_digest(text)}"] if text else []


def _responses_answer(response: dict[str, Any]) -> _Reasoning | None:
    """A response's reasoning items and the keys of the items that followed them."""
    items = [i for i in response.get("output") or [] if isinstance(i, dict)]
    kept = tuple(i for i in items if _is_reasoning(i))
    first = next((n for n, i in enumerate(items) if _is_reasoning(i)), len(items))
    keys = [k for i in items[first:] if not _is_reasoning(i) for k in _responses_keys(i)]
    if not kept or not keys:
        return None
    identities = frozenset(_responses_identity(i) for i in kept)
    return _Reasoning(tuple(copy.deepcopy(i) for i in kept), identities, tuple(keys))

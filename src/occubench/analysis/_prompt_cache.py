"""Prompt-cache friendliness of the simulator: how much of each prompt the next one reuses.

Provider prompt caches serve the longest exact prefix a request shares with an earlier
one. The simulator's history only grows (see ``occubench.simulator._prompt``), so each
of its prompts in a task should be an exact prefix of the next. This module measures
that from a sample's model events: for each pair of consecutive simulator prompts,
the length of their common prefix over the length of the earlier prompt, in
characters of a canonical rendering of the messages (role, text and tool calls).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from inspect_ai.event import Event, ModelEvent
from inspect_ai.model import ChatMessage, ChatMessageAssistant
from pydantic import BaseModel, Field

from occubench.roles import Role


class PrefixShare(BaseModel):
    """Prefix reuse between consecutive prompts of one role (one sample or many)."""

    prompts: int = Field(default=0, description="Prompts seen.")
    pairs: int = Field(default=0, description="Consecutive pairs compared (same sample).")
    exact_pairs: int = Field(
        default=0, description="Pairs whose earlier prompt is an exact prefix of the later one."
    )
    shared_chars: int = Field(
        default=0, description="Characters of the earlier prompts that start the next one."
    )
    total_chars: int = Field(default=0, description="Characters of the earlier prompts.")

    @property
    def share(self) -> float:
        """shared_chars / total_chars (1.0 when there is no pair to compare)."""
        return self.shared_chars / self.total_chars if self.total_chars else 1.0

    def __add__(self, other: PrefixShare) -> PrefixShare:
        """Pool two measurements (pairs never span samples)."""
        return PrefixShare(
            prompts=self.prompts + other.prompts,
            pairs=self.pairs + other.pairs,
            exact_pairs=self.exact_pairs + other.exact_pairs,
            shared_chars=self.shared_chars + other.shared_chars,
            total_chars=self.total_chars + other.total_chars,
        )


def render_message(message: ChatMessage) -> str:
    """Render one message canonically (role, text, tool calls): what a prompt cache keys on."""
    calls = message.tool_calls if isinstance(message, ChatMessageAssistant) else None
    tool_part = (
        json.dumps([[c.function, c.arguments] for c in calls], sort_keys=True) if calls else ""
    )
    return f"<|{message.role}|>{message.text}{tool_part}<|end|>"


def common_prefix(earlier: Sequence[str], later: Sequence[str]) -> int:
    """Characters of ``earlier`` (rendered messages) that also start ``later``."""
    shared = 0
    for a, b in zip(earlier, later, strict=False):
        if a == b:
            shared += len(a)
            continue
        n = 0
        for x, y in zip(a, b, strict=False):
            if x != y:
                break
            n += 1
        return shared + n
    return shared


def role_prompts(events: Iterable[Event], role: str = Role.SIMULATOR.value) -> list[list[str]]:
    """Render the input of every model call of ``role``, in order."""
    return [
        [render_message(m) for m in event.input]
        for event in events
        if isinstance(event, ModelEvent) and event.role == role
    ]


def prefix_share(events: Iterable[Event], role: str = Role.SIMULATOR.value) -> PrefixShare:
    """Prefix reuse between consecutive prompts of ``role`` in one sample's events."""
    prompts = role_prompts(events, role)
    result = PrefixShare(prompts=len(prompts))
    for earlier, later in zip(prompts, prompts[1:], strict=False):
        total = sum(len(m) for m in earlier)
        shared = common_prefix(earlier, later)
        result.pairs += 1
        result.exact_pairs += shared == total
        result.shared_chars += shared
        result.total_chars += total
    return result

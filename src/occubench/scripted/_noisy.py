"""Noisy scripted models: an agent and a judge that do not always answer the same.

A real model at a temperature answers the same conversation differently from one call to
the next; these stand in for that offline, so that verdict flips between epochs can be
shown and split by cause (``analysis.verdict_flips``). Each draw is a hash of the seed
(``-M seed=N``, default 0), the conversation, and how many times this model instance was
asked that conversation before: the n-th ask of a conversation always draws the same.
Which epoch gets which draw depends on the order the epochs ask in, but the draws a task's
epochs share out among them do not, so the counts of a run (passes, flips) are the same
every time in one process.

- ``noisy-agent``: the ``no-retry`` reference agent, but before each of its turns a share
  (``NOISY_AGENT_SHARE``) of draws makes it stop and give up.
- ``noisy-judge``: ``scripted-judge``, with a share (``NOISY_JUDGE_SHARE``) of its verdicts
  turned the other way.
- ``noisy-simulator``: ``canned``, but a share (``NOISY_SHARE``, as the seeded ``noisy``) of
  its answers is the transient "busy" error. Unlike ``noisy``, whose answer is fixed by
  the run's simulator seed, it answers the same action differently from epoch to epoch
  under one seed, so a world (which keys answers by the seed, among the rest) can hold
  its first answer and give it to every epoch.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from inspect_ai.model import ChatMessage, ChatMessageAssistant
from inspect_ai.tool import ToolInfo

from occubench.scripted._agents import REFERENCE_AGENTS, final_reply
from occubench.scripted._behaviours import scripted_judge
from occubench.scripted._canned import canned_simulator
from occubench.scripted._flawed import BUSY, NOISY_SHARE
from occubench.scripted._reply import Behaviour, Reply
from occubench.scripted._simulated import observation_reply

NOISY_AGENT_SHARE = 0.05
"""Share of the noisy agent's turns on which it gives up."""
NOISY_JUDGE_SHARE = 0.2
"""Share of the noisy judge's verdicts turned the other way."""
GIVE_UP = "I stop here; I could not complete the task."


class Draws:
    """Seeded draws in [0, 1): the n-th ask of a conversation always draws the same."""

    def __init__(self, name: str, seed: int) -> None:
        self.prefix = f"{name}|{seed}"
        self.asked: dict[str, int] = {}

    def draw(self, messages: list[ChatMessage]) -> float:
        """The next draw for this conversation."""
        turns = [
            [
                m.role,
                m.text,
                [[c.function, c.arguments] for c in m.tool_calls or []]
                if isinstance(m, ChatMessageAssistant)
                else [],
            ]
            for m in messages
        ]
        conversation = hashlib.sha256(json.dumps(turns, sort_keys=True).encode()).hexdigest()
        n = self.asked.get(conversation, 0)
        self.asked[conversation] = n + 1
        key = f"{self.prefix}|{conversation}|{n}".encode()
        return int(hashlib.sha256(key).hexdigest()[:8], 16) / 0x100000000


def noisy_agent(seed: int = 0) -> Behaviour:
    """The ``no-retry`` agent that gives up on a seeded share of its turns (module doc)."""
    draws = Draws("noisy-agent", seed)
    follow = REFERENCE_AGENTS["no-retry"]

    def behaviour(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        if draws.draw(messages) < NOISY_AGENT_SHARE:
            return final_reply(GIVE_UP, tools)
        return follow(messages, tools)

    return behaviour


def noisy_judge(seed: int = 0) -> Behaviour:
    """``scripted-judge`` with a seeded share of its verdicts turned over (module doc)."""
    draws = Draws("noisy-judge", seed)

    def behaviour(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        reply = scripted_judge(messages, tools)
        if draws.draw(messages) >= NOISY_JUDGE_SHARE:
            return reply
        verdict = json.loads(reply.content)
        verdict["is_correct"] = not verdict["is_correct"]
        verdict["feedback"] = "on second thought, " + str(verdict["feedback"])
        return Reply(content=json.dumps(verdict))

    return behaviour


def noisy_simulator(seed: int = 0) -> Behaviour:
    """``canned`` with a share of its answers the "busy" error, drawn per ask (module doc)."""
    draws = Draws("noisy-simulator", seed)

    def behaviour(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        if draws.draw(messages) < NOISY_SHARE:
            return Reply(content=observation_reply(messages, BUSY))
        return canned_simulator(messages, tools)

    return behaviour


NOISY: dict[str, Callable[..., Behaviour]] = {
    "noisy-agent": noisy_agent,
    "noisy-judge": noisy_judge,
    "noisy-simulator": noisy_simulator,
}
"""The noisy models by name (``occubench/noisy-agent``), each made per model instance."""

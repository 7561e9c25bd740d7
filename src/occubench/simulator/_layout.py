"""How the simulator is asked: its message layout, tags and how a reply is read.

Two layouts, one per ``MessageStyle``:

- ``PaperLayout``, the release's (``docs/protocol.md``): the env's system prompt exactly
  as stored (doubled braces and all), the fault rules after two newlines, then an
  "OUTPUT FORMAT INSTRUCTIONS" section asking for one JSON object in
  ``<predicted_observation>`` tags; each earlier call as a user message
  ``<agent_action>`` block (the action as ``{"name": ..., "arguments": <the agent's raw
  argument string>}``) and an assistant message ``<predicted_observation>`` block; the
  current call's ``<agent_action>`` block followed by a short format reminder; no date.
  A reply is read as the release reads it: the text inside the tags (or the whole
  reply), parsed as JSON directly or from a fenced block; a failed parse is re-sampled
  with the same messages, and the observation the agent sees is that text as written.
- ``OccubenchLayout``, ours: the prompt with halved braces, known answers, a reply-format
  section with the fixed date; actions as JSON user messages, observations in
  ``<observation>`` tags; a reply must hold one whole JSON object and an unusable reply
  is re-asked with the problem named.
"""

from __future__ import annotations

import json
import re
from abc import ABC, abstractmethod
from typing import Any, NamedTuple

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser

from occubench.dataset import EnvConfig
from occubench.protocols import MessageStyle
from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._prompt import (
    action_message,
    observation_message,
    render_system_prompt,
    state_sections,
)
from occubench.simulator._state import reask_for, state_action
from occubench.text import loads


class ParsedObservation(NamedTuple):
    """The observation a reply holds."""

    value: Any
    """Its JSON value."""
    text: str
    """It as the agent sees it."""


class SimulatorLayout(ABC):
    """One protocol's way of asking the simulator and reading its reply."""

    style: MessageStyle

    @abstractmethod
    def system_prompt(self, env: EnvConfig, *, date: str, rules: str) -> str:
        """The system message: the env's prompt with the fault rules and format section."""

    @abstractmethod
    def action_text(self, tool: str, arguments: dict[str, Any], raw: str | None) -> str:
        """The action as the simulator sees it (``raw``: the agent's argument string)."""

    @abstractmethod
    def history(self, action: str, observation: str) -> list[ChatMessage]:
        """An earlier call and its observation, as the history shows them."""

    @abstractmethod
    def current(self, action: str, state: dict[str, Any] | None) -> ChatMessage:
        """The message asking for the current call's observation."""

    @abstractmethod
    def read(self, text: str) -> ParsedObservation:
        """The observation in a reply: its JSON value and the text the agent sees.

        Raises:
            ObservationParseError: the reply holds no usable observation.
        """

    @abstractmethod
    def reask(self, error: Exception) -> str | None:
        """The correction after an unusable reply (None: ask the same messages again)."""

    @property
    def parse_errors(self) -> tuple[type[Exception], ...]:
        """The errors that mean "unusable reply, ask again"."""
        return (ObservationParseError,)


PAPER_FORMAT = (
    "Reply with nothing but one valid JSON object, the observation, wrapped in "
    "<predicted_observation> and </predicted_observation> tags: no text before or after "
    "it and no Markdown code fences, inside the tags or outside them."
)
"""Our paraphrase of the release's output-format instructions (system prompt)."""

PAPER_REMINDER = (
    "Reply with one valid JSON object inside <predicted_observation> and "
    "</predicted_observation> tags."
)
"""Our paraphrase of the release's shorter reminder after the current action."""

FORMAT_HEADING = "### OUTPUT FORMAT INSTRUCTIONS"

_PREDICTED = re.compile(r"<predicted_observation>(.*?)</predicted_observation>", re.DOTALL)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.DOTALL)


class PaperLayout(SimulatorLayout):
    """The release's layout (module doc); its wording may be the release's own."""

    style = MessageStyle.PAPER

    def __init__(self, format_text: str = PAPER_FORMAT, reminder: str = PAPER_REMINDER) -> None:
        self.format_text = format_text
        self.reminder = reminder

    def system_prompt(self, env: EnvConfig, *, date: str, rules: str) -> str:
        prompt = env.world_model_system_prompt + state_sections(env)
        if rules:
            prompt += "\n\n" + rules.strip()
        return f"{prompt}\n{FORMAT_HEADING}\n{self.format_text}"

    def action_text(self, tool: str, arguments: dict[str, Any], raw: str | None) -> str:
        given = raw if raw is not None else json.dumps(arguments, ensure_ascii=False)
        return json.dumps({"name": tool, "arguments": given}, ensure_ascii=False)

    def history(self, action: str, observation: str) -> list[ChatMessage]:
        return [
            ChatMessageUser(content=f"<agent_action>\n{action}\n</agent_action>"),
            ChatMessageAssistant(
                content=f"<predicted_observation>\n{observation}\n</predicted_observation>"
            ),
        ]

    def current(self, action: str, state: dict[str, Any] | None) -> ChatMessage:
        if state is not None:  # explicit state mode: the action also carries the state
            action = json.dumps({**json.loads(action), "current_state": state})
        return ChatMessageUser(
            content=f"<agent_action>\n{action}\n</agent_action>\n{FORMAT_HEADING}\n{self.reminder}"
        )

    def read(self, text: str) -> ParsedObservation:
        found = _PREDICTED.search(text)
        body = found.group(1).strip() if found else text
        for candidate in (body, *(m.group(1).strip() for m in [_FENCE.search(body)] if m)):
            try:
                value = loads(candidate)
            except json.JSONDecodeError:
                continue
            if value is not None:
                return ParsedObservation(value, body)
        raise ObservationParseError(f"no JSON in the reply: {body.strip()[:120]!r}")

    def reask(self, error: Exception) -> str | None:
        return None


class OccubenchLayout(SimulatorLayout):
    """occubench's own layout (module doc)."""

    style = MessageStyle.OCCUBENCH

    def system_prompt(self, env: EnvConfig, *, date: str, rules: str) -> str:
        return render_system_prompt(env, date=date, extra_rules=rules)

    def action_text(self, tool: str, arguments: dict[str, Any], raw: str | None) -> str:
        return action_message(tool, arguments).text

    def history(self, action: str, observation: str) -> list[ChatMessage]:
        return [ChatMessageUser(content=action), observation_message(observation)]

    def current(self, action: str, state: dict[str, Any] | None) -> ChatMessage:
        if state is None:
            return ChatMessageUser(content=action)
        sent = json.loads(action)
        return ChatMessageUser(content=state_action(sent["name"], sent["arguments"], state))

    def read(self, text: str) -> ParsedObservation:
        value = parse_observation(text)
        return ParsedObservation(value, json.dumps(value, ensure_ascii=False))

    def reask(self, error: Exception) -> str | None:
        return reask_for(error)


LAYOUTS: dict[MessageStyle, type[SimulatorLayout]] = {
    MessageStyle.PAPER: PaperLayout,
    MessageStyle.OCCUBENCH: OccubenchLayout,
}


def system_message(prompt: str) -> ChatMessageSystem:
    """Wrap the rendered prompt as the first message."""
    return ChatMessageSystem(content=prompt)

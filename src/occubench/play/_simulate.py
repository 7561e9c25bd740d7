"""A person as the simulator: each call an agent makes is shown to them, they write its answer.

The ``human/<name>`` model in the simulator role reads the very request Inspect builds for
a simulator model (``sim_turn_of``: the system prompt with the environment's tools and
initial state, the calls and observations so far, the current call) and returns the
observation the person writes at their desk (``SimDesk``): one JSON object, checked
(``observation_problems``) and asked again, every problem listed, until it passes. A
simulator model's answer to the same request may be offered as a draft to accept or edit.

In the terminal (``TerminalSimDesk``) the person types:

- a JSON object, over as many lines as it takes, ended by an empty line;
- ``accept``: the draft, as it is (when one is offered and it passes the checks);
- ``edit``: the draft printed again, to copy and change;
- ``prompt``, ``history``: the system prompt, or the calls so far, shown again.

The end of the input ends the session (the sample ends in an infrastructure error: no
observation was written).
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

import anyio
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from pydantic import BaseModel, Field

from occubench.dataset import json_depth
from occubench.defaults import DEFAULT_MAX_JSON_DEPTH
from occubench.play._form import MAX_FIELD_CHARS
from occubench.play._terminal import TerminalDesk, _Ended, _pretty
from occubench.play._turns import Move, Turn
from occubench.text import terminal_plain

MAX_OBSERVATION_CHARS = MAX_FIELD_CHARS
"""Longest observation a person may write (characters of its JSON text)."""
MAX_OBSERVATION_LINES = 5_000
"""Most lines one observation may be typed over in the terminal."""
SIM_HELP = (
    "Write the observation as one JSON object (as many lines as you need, then an empty "
    "line); 'accept' takes the draft, 'edit' shows it to copy; 'prompt' and 'history' show "
    "them again."
)


class Exchange(BaseModel):
    """One earlier call and the observation the simulator's history holds for it."""

    call: str = Field(description="The call as the simulator is shown it.")
    observation: str = Field(description="The observation the history holds.")


class SimTurn(BaseModel):
    """What the person writing observations sees at one call (what a simulator is given)."""

    number: int = Field(ge=1, description="1 for the first observation, then one more each.")
    system_prompt: str = Field(
        description="The simulator's system prompt: the environment, its tools, its initial "
        "state and the rules of the answer."
    )
    history: list[Exchange] = Field(
        default_factory=list, description="The calls and observations so far, in order."
    )
    call: str = Field(description="The current call, as the simulator is shown it.")
    draft: str | None = Field(
        default=None, description="A simulator model's answer to the same request, if asked."
    )


class SimDesk(Protocol):
    """Where a person is shown a call and writes its observation."""

    async def write(self, turn: SimTurn) -> str:
        """The observation the person wrote: a JSON object's text that passes the checks."""
        ...


class PersonLeft(RuntimeError):
    """The person writing observations stopped (the input ended) before answering."""


def sim_turn_of(messages: list[ChatMessage], number: int, draft: str | None = None) -> SimTurn:
    """The turn a simulator model would be given: the system prompt, the history, the call.

    The last user message is the current call; before it, each user message and the
    assistant message after it are one earlier exchange.
    """
    system = next((m.text for m in messages if isinstance(m, ChatMessageSystem)), "")
    talk = [m for m in messages if isinstance(m, ChatMessageUser | ChatMessageAssistant)]
    history: list[Exchange] = []
    pending: str | None = None
    for message in talk[:-1]:
        if isinstance(message, ChatMessageUser):
            pending = message.text
        elif pending is not None:
            history.append(Exchange(call=_unwrapped(pending), observation=_unwrapped(message.text)))
            pending = None
    call = _unwrapped(talk[-1].text) if talk and isinstance(talk[-1], ChatMessageUser) else ""
    return SimTurn(number=number, system_prompt=system, history=history, call=call, draft=draft)


_WRAPPED = re.compile(
    r"^\s*<(observation|predicted_observation|agent_action)>\s*(.*?)\s*</\1>", re.DOTALL
)
_TAGGED = re.compile(r"<predicted_observation>\s*(.*?)\s*</predicted_observation>", re.DOTALL)


def _unwrapped(text: str) -> str:
    """A history message without the layout's tags around it (``<observation>``...)."""
    found = _WRAPPED.match(text)
    return found.group(2) if found else text


def draft_observation(reply: str) -> str:
    """The observation in a simulator model's reply, as JSON text to accept or edit.

    The reply itself when it is JSON; else the body of a ``<predicted_observation>``
    block (the paper's layout), else the text from its first ``{`` to its last ``}``;
    else the reply as it is (then it is no observation, and accepting it is refused).
    """
    reply = reply[: MAX_OBSERVATION_CHARS + 1]
    tagged = _TAGGED.search(reply)
    candidates = [reply, *([tagged.group(1)] if tagged else [])]
    if "{" in reply and "}" in reply:
        candidates.append(reply[reply.index("{") : reply.rindex("}") + 1])
    for candidate in candidates:
        if not observation_problems(candidate):
            return json.dumps(json.loads(candidate), ensure_ascii=False, indent=2)
    return reply


def observation_problems(text: str) -> list[str]:
    """Every reason ``text`` is not an observation a person may write (empty: it is one).

    An observation is one JSON object of at most ``MAX_OBSERVATION_CHARS`` characters,
    nested at most ``DEFAULT_MAX_JSON_DEPTH`` levels, with no NaN or infinity.
    """
    if len(text) > MAX_OBSERVATION_CHARS:
        return [f"longer than {MAX_OBSERVATION_CHARS} characters ({len(text)})"]
    if not text.strip():
        return ["empty: write one JSON object"]
    try:
        value = json.loads(text, parse_constant=_not_json)
    except json.JSONDecodeError as e:
        return [f"not JSON: {e.msg} at line {e.lineno}, column {e.colno}"]
    except ValueError as e:
        return [f"not JSON: {e}"]
    except RecursionError:
        return [f"nested more than {DEFAULT_MAX_JSON_DEPTH} levels"]
    problems = []
    if not isinstance(value, dict):
        problems.append(f"a JSON object is needed, not {_kind(value)}")
    if json_depth(value) > DEFAULT_MAX_JSON_DEPTH:
        problems.append(f"nested more than {DEFAULT_MAX_JSON_DEPTH} levels")
    return problems


def _not_json(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if value is None:
        return "null"
    return "a number"


def observation_text(text: str) -> str:
    """The written observation as the simulator's reply (the JSON object, compact)."""
    return json.dumps(json.loads(text), ensure_ascii=False)


class TerminalSimDesk(TerminalDesk):
    """A person at a terminal writing observations (module doc); the agent's header is shared."""

    async def write(self, turn: SimTurn) -> str:
        """The person's observation, typed in a worker thread (the eval's loop goes on)."""
        return await anyio.to_thread.run_sync(self.observation, turn, abandon_on_cancel=True)

    async def ask(self, turn: Turn) -> Move:
        """Not this desk's role: a person writing observations makes no moves."""
        raise RuntimeError("this desk writes observations; it makes no moves")

    def observation(self, turn: SimTurn) -> str:
        """Show what is new in ``turn`` and read the observation (module doc).

        Raises:
            PersonLeft: the input ended.
        """
        if turn.number == 1:
            self.show_prompt(turn)
        self.show_history(turn, since=min(self.shown, len(turn.history)))
        self.shown = len(turn.history)
        self.say(f"\nCall {turn.number} (history: {len(turn.history)} call(s)):", "bold")
        self.say(terminal_plain(_pretty(turn.call)))
        if turn.draft is not None:
            self.say("\nDraft observation (type 'accept' to take it):", "bold")
            self.say(terminal_plain(_pretty(turn.draft)))
        try:
            return self._written(turn)
        except _Ended:
            raise PersonLeft("the input ended before the observation was written") from None

    def show_prompt(self, turn: SimTurn) -> None:
        """The header and the simulator's system prompt (environment, tools, initial state)."""
        info = self.info
        self.say(
            f"Task {info.task_id}: {terminal_plain(info.scenario)} "
            f"({terminal_plain(info.industry)} / {terminal_plain(info.domain)}); "
            f"you write the observations as human/{info.player}",
            "bold",
        )
        self.say("\nSimulator system prompt:", "bold")
        self.say(terminal_plain(turn.system_prompt))
        self.say(f"\n{SIM_HELP}")

    def show_history(self, turn: SimTurn, since: int = 0) -> None:
        """The earlier calls and their observations (from ``since`` on)."""
        for number, exchange in enumerate(turn.history[since:], since + 1):
            self.say(f"\nCall {number}:", "bold")
            self.say(terminal_plain(_pretty(exchange.call)))
            self.say("Observation:")
            self.say(terminal_plain(_pretty(exchange.observation)))

    def _written(self, turn: SimTurn) -> str:
        """Read until a written (or accepted) observation passes the checks."""
        while True:
            first = self.read(f"\n[observation {turn.number}] >")
            word = first.strip().lower()
            if word in ("", "help", "?"):
                self.say(SIM_HELP)
                continue
            if word == "prompt":
                self.show_prompt(turn)
                continue
            if word == "history":
                self.show_history(turn)
                continue
            if word in ("accept", "edit") and turn.draft is None:
                self.say("No draft is offered: write the observation.")
                continue
            if word == "edit":
                assert turn.draft is not None
                self.say(terminal_plain(_pretty(turn.draft)))
                continue
            text = turn.draft if word == "accept" and turn.draft is not None else self._lines(first)
            problems = observation_problems(text)
            if not problems:
                return observation_text(text)
            self.say("Not an observation:", "bold red")
            for problem in problems:
                self.say(f"  - {terminal_plain(problem)}")

    def _lines(self, first: str) -> str:
        """The JSON text typed from ``first`` on, up to the line that completes it.

        An empty line ends it too; what is typed past the bounds is read and dropped.
        """
        lines, size, over = [first], len(first), False
        closes = first.rstrip().endswith(("}", "]"))  # only such a line can complete a value
        while over or not closes or not _complete("\n".join(lines)):
            line = self.read(">")
            if not line.strip():
                break
            size += len(line) + 1
            over = over or size > MAX_OBSERVATION_CHARS or len(lines) >= MAX_OBSERVATION_LINES
            if not over:
                lines.append(line)
            closes = line.rstrip().endswith(("}", "]"))
        return "x" * (MAX_OBSERVATION_CHARS + 1) if over else "\n".join(lines)


def _complete(text: str) -> bool:
    """Whether ``text`` is already one whole JSON value (of any kind)."""
    if len(text) > MAX_OBSERVATION_CHARS:
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True

"""Scripted simulators with one known flaw each, and a scripted judge of rule invention.

They stand for the ways a model goes wrong as a simulator, so that the fidelity audit
(``occubench audit``) can be shown to catch each one by its own metric. Each is the
``canned`` simulator plus one flaw:

- ``fabricating``: adds an invented record (a copy of the last one, with new ids) to
  every list of records, and answers a call it has no record for (an unknown id) with
  invented data instead of the not-found error.
- ``omitting``: drops the last record of every list of two or more records.
- ``inconsistent``: when the same action was asked before (in the history), shifts every
  number that is not an id by the count of earlier asks, so a repeated read differs.
- ``rule-inventing``: appends a made-up policy to the first text value that is not an
  id, leaving keys and ids as they are (only a judge can notice).
- ``drifting``: answers like ``canned`` for the first ``DRIFT_AFTER`` actions of an
  episode, then drifts off the tools' contract: each later answer is wrapped in a generic
  envelope (``{"status": "success", "data": ...}``), the shape a long conversation wears a
  model into.

``off-schema`` is not the canned simulator: it ignores each tool's ``example_output`` and
answers every action with one generic envelope, ``{"status": "success", "tool": ...,
"result": {...}}`` (the action's own arguments as the result), as a weak model does.

``noisy`` is the ``canned`` simulator at a temperature: a seeded share (``NOISY_SHARE``) of
its answers is a transient "busy" error. Which ones depends on the seed it is asked with
(the run's ``simulator_seed``) and on the conversation, so two seeds give two
environments and the same seed gives the same one again.

``rule-judge`` is an offline verifier for the audit's rule-invention question: it calls
an observation unfaithful when it holds a text of four or more words that does not occur
in the environment block (structured errors aside).

Here an id is a value under a key ending in ``id``, ``ids``, ``code`` or ``number``.
"""

from __future__ import annotations

import copy
import hashlib
import html
import json
import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageUser
from inspect_ai.tool import ToolInfo

from occubench.scripted._canned import (
    canned_observation,
    canned_observations,
    canned_simulator,
    canonical,
)
from occubench.scripted._reply import Behaviour, Reply, SeededBehaviour
from occubench.scripted._simulated import last_action, observation_reply

INVENTED_POLICY = " (site policy: requests older than 30 days need a supervisor's written approval)"
_ID_ENDINGS = ("id", "ids", "code", "number")
_LAST_DIGITS = re.compile(r"(\d+)(?!.*\d)")
_BLOCK = re.compile(r"<(environment|observation)>\n(.*?)\n</\1>", re.DOTALL)
_SENTENCE_WORDS = 4


def _is_id(key: str) -> bool:
    return key.lower().endswith(_ID_ENDINGS)


def _action(messages: list[ChatMessage]) -> tuple[str, dict[str, Any]]:
    """The last action (name, arguments) of a simulator conversation."""
    action = last_action(messages)
    return str(action.name), action.arguments


def _canned(messages: list[ChatMessage], tools: list[ToolInfo]) -> dict[str, Any]:
    return canned_observation(messages)


def _reply(messages: list[ChatMessage], observation: dict[str, Any]) -> Reply:
    return Reply(content=observation_reply(messages, observation))


def _record_lists(value: Any) -> list[list[Any]]:
    """Every list of objects in a JSON value (outer lists first)."""
    found: list[list[Any]] = []
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    )
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        found.append(value)
    for child in children:
        found += _record_lists(child)
    return found


def _new_id(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 7
    text = str(value)
    if _LAST_DIGITS.search(text):
        return _LAST_DIGITS.sub(lambda m: str(int(m.group(1)) + 7).zfill(len(m.group(1))), text)
    return f"{text}-NEW"


def fabricating_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Canned, plus an invented record in every list and invented data for unknown calls."""
    observation = _canned(messages, tools)
    name, arguments = _action(messages)
    if "error" in observation:
        known = [c["observation"] for c in canned_observations(messages) if c["tool"] == name]
        observation = copy.deepcopy(known[0]) if known else {"status": "active"}
        observation.update({k: v for k, v in arguments.items() if k in observation or not known})
    for records in _record_lists(observation):
        invented = {k: _new_id(v) if _is_id(k) else v for k, v in records[-1].items()}
        records.append(invented)
    return _reply(messages, observation)


def omitting_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Canned, minus the last record of every list of two or more records."""
    observation = _canned(messages, tools)
    for records in _record_lists(observation):
        if len(records) >= 2:
            records.pop()
    return _reply(messages, observation)


def _shift(value: Any, by: int, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _shift(v, by, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_shift(v, by, key) for v in value]
    if isinstance(value, bool) or _is_id(key):
        return value
    if isinstance(value, int):
        return value + by
    if isinstance(value, float):
        return round(value + 0.1 * by, 6)
    return value


def inconsistent_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Canned, with numbers shifted by how often the same action was asked before."""
    observation = _canned(messages, tools)
    current = canonical(_action(messages))
    asked = sum(
        isinstance(m, ChatMessageUser) and canonical(_action([m])) == current for m in messages[:-1]
    )
    return _reply(
        messages, _shift(observation, asked) if "error" not in observation else observation
    )


def _append_policy(value: Any) -> bool:
    """Append INVENTED_POLICY to the first text value not under an id key; whether done."""
    items = (
        list(value.items())
        if isinstance(value, dict)
        else list(enumerate(value))
        if isinstance(value, list)
        else []
    )
    for key, item in items:
        if isinstance(item, str) and not _is_id(str(key)):
            value[key] = item + INVENTED_POLICY
            return True
        if isinstance(item, dict | list) and _append_policy(item):
            return True
    return False


def rule_inventing_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Canned, with a made-up policy appended to the first text value that is not an id."""
    observation = _canned(messages, tools)
    if "error" not in observation:
        _append_policy(observation)
    return _reply(messages, observation)


def off_schema_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """A generic success envelope for every action, whatever the tool's output schema."""
    name, arguments = _action(messages)
    return _reply(messages, {"status": "success", "tool": name, "result": dict(arguments)})


DRIFT_AFTER = 2
"""Actions the drifting simulator answers as ``canned`` before it drifts."""


def drifting_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Canned for the first ``DRIFT_AFTER`` actions, then each answer in a generic envelope."""
    asked = sum(isinstance(m, ChatMessageUser) for m in messages)
    observation = _canned(messages, tools)
    if asked <= DRIFT_AFTER or "error" in observation:
        return _reply(messages, observation)
    return _reply(messages, {"status": "success", "data": observation})


NOISY_SHARE = 0.25
"""Share of the noisy simulator's answers that are a transient error."""

BUSY = {"error": {"code": "UNAVAILABLE", "message": "the service is busy; try again"}}


def noisy_simulator(messages: list[ChatMessage], tools: list[ToolInfo], seed: int | None) -> Reply:
    """Canned, but a seeded share of the answers is a transient error (module doc)."""
    key = f"{seed}|{len(messages)}|{canonical(_action(messages))}"
    draw = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    if draw < NOISY_SHARE:
        return _reply(messages, BUSY)
    return canned_simulator(messages, tools)


def _texts(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [t for k, v in value.items() if k not in ("error", "errors") for t in _texts(v)]
    if isinstance(value, list):
        return [t for v in value for t in _texts(v)]
    return [value] if isinstance(value, str) else []


def rule_judge(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """Faithful unless the observation holds a sentence the environment block lacks."""
    request = messages[-1].text if messages else ""
    blocks = {tag: html.unescape(text) for tag, text in _BLOCK.findall(request)}
    try:
        observation = json.loads(blocks.get("observation", "{}"))
    except json.JSONDecodeError:
        observation = {}
    environment = blocks.get("environment", "")
    invented = [
        t for t in _texts(observation) if len(t.split()) >= _SENTENCE_WORDS and t not in environment
    ]
    verdict = {
        "is_correct": not invented,
        "feedback": f"asserts what the configuration does not give: {invented[0]!r}"
        if invented
        else "nothing beyond the configuration",
    }
    return Reply(content=json.dumps(verdict))


FLAWED: dict[str, Behaviour] = {
    "fabricating": fabricating_simulator,
    "omitting": omitting_simulator,
    "inconsistent": inconsistent_simulator,
    "rule-inventing": rule_inventing_simulator,
    "off-schema": off_schema_simulator,
    "drifting": drifting_simulator,
    "rule-judge": rule_judge,
}
"""The flawed simulators and the rule judge by name (``occubench/<name>``)."""

SEEDED: dict[str, SeededBehaviour] = {"noisy": noisy_simulator}
"""Scripted models that honour the seed they are asked with, by name."""

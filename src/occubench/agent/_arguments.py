"""The tool-argument rule of the occubench protocol, and the paper's pass-through.

Under the occubench protocol (``validate_tool_args``) an unknown tool, arguments that are
not a JSON object, nest too deep or fail the tool's schema get an error and never reach
the simulator, as a real API would answer. Every caller applies this one rule: the
built-in loop, an MCP client, an agent program, the gym API. (Inspect agents, ``--agent``,
go through Inspect's own tool loop, which checks the same schema.) Under the paper's
protocol the agent's raw argument string is passed on (``loose_arguments``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any, NamedTuple

from jsonschema import Draft7Validator

from occubench.dataset import MAX_DEPTH, ToolSpec, json_depth, tool_params
from occubench.text import clean_json, escape_invalid, loads


class CallProblem(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Why a tool call was refused before reaching the environment."""

    UNKNOWN_TOOL = "unknown_tool"
    """No tool of that name in the environment."""
    NOT_JSON = "not_json"
    """The arguments are not a JSON object."""
    INVALID = "invalid_arguments"
    """The arguments fail the tool's schema."""
    TOOL_CALL_LIMIT = "tool_call_limit"
    """The call would pass the run's tool-call limit."""


class BadToolCall(ValueError):
    """A tool call refused before the environment: the caller gets an error, not a crash."""

    def __init__(self, problem: CallProblem, message: str) -> None:
        super().__init__(message)
        self.problem = problem
        self.message = message


def tool_schema(spec: ToolSpec) -> dict[str, Any]:
    """The JSON Schema of a tool's arguments as agents are shown it and calls are checked."""
    return tool_params(spec).model_dump(exclude_none=True)


def _as_object(tool: str, arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    if arguments is None:
        return {}
    if isinstance(arguments, Mapping):
        return dict(clean_json(dict(arguments)))
    try:
        parsed = loads(arguments) if arguments.strip() else {}
    except (json.JSONDecodeError, RecursionError, ValueError) as e:
        raise BadToolCall(
            CallProblem.NOT_JSON, f"arguments of {tool!r} are not valid JSON: {e}"
        ) from None
    if not isinstance(parsed, dict):
        raise BadToolCall(
            CallProblem.NOT_JSON,
            f"arguments of {tool!r} must be a JSON object, got {type(parsed).__name__}",
        )
    return parsed


def checked_arguments(
    tools: Sequence[ToolSpec], tool: str, arguments: str | Mapping[str, Any] | None
) -> dict[str, Any]:
    """The call's arguments as an object, once the call passes the argument rule.

    Args:
        tools: The environment's tools.
        tool: The tool called.
        arguments: A JSON object, its text, or None (no arguments).

    Raises:
        BadToolCall: an unknown tool, arguments that are not a JSON object, or
            arguments that fail the tool's schema (every violation is listed).
    """
    spec = next((t for t in tools if t.name == tool), None)
    if spec is None:
        known = ", ".join(t.name for t in tools)
        raise BadToolCall(CallProblem.UNKNOWN_TOOL, f"unknown tool {tool!r}; tools: {known}")
    value = _as_object(tool, arguments)
    if json_depth(value) > MAX_DEPTH:
        raise BadToolCall(
            CallProblem.INVALID,
            f"arguments of {tool!r} exceed the maximum supported nesting depth of {MAX_DEPTH}",
        )
    try:
        errors = sorted(
            Draft7Validator(tool_schema(spec)).iter_errors(value), key=lambda e: list(e.path)
        )
    except RecursionError:
        raise BadToolCall(CallProblem.INVALID, f"arguments of {tool!r} nest too deeply") from None
    if errors:
        lines = [f"- {e.message}" for e in errors]
        raise BadToolCall(
            CallProblem.INVALID,
            f"{len(errors)} problem(s) with the arguments of {tool!r}:\n" + "\n".join(lines),
        )
    return value


class LooseArguments(NamedTuple):
    """A call's arguments under the paper's rule: passed on unchecked."""

    parsed: dict[str, Any]
    """The parsed object, or {} (fault matching only)."""
    raw: str
    """The text the simulator is shown (it absorbs a malformed call)."""


def loose_arguments(arguments: str | Mapping[str, Any] | None) -> LooseArguments:
    """The paper's rule: no check. The parsed object (or {}) and the raw text passed on."""
    if isinstance(arguments, Mapping):
        given = clean_json(dict(arguments))
        return LooseArguments(given, json.dumps(given, ensure_ascii=False))
    raw = escape_invalid(arguments or "")
    try:
        parsed = loads(raw) if raw.strip() else {}
    except (json.JSONDecodeError, RecursionError, ValueError):
        parsed = {}
    return LooseArguments(parsed if isinstance(parsed, dict) else {}, raw)

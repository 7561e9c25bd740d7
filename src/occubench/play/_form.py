"""A tool's form, made from its JSON Schema, and the arguments a filled form gives.

One field per property: a string is typed as it is, a number or a boolean is read as one,
an ``enum`` is a choice, anything else (arrays, objects, unions) is typed as JSON. A field
left empty (or blank) is left out of the arguments. The arguments then pass the protocol's rule, the
one every agent's call passes (``occubench.agent.checked_arguments``: under the occubench
protocol an argument the schema refuses, or a required one left out, is a problem to fix;
under the paper's the simulator gets what was typed). Every problem is listed at once, so
the person fixes the form and sends it again.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from typing import Any

from occubench.agent import BadToolCall, checked_arguments
from occubench.dataset import MAX_DEPTH, ToolSpec, json_depth
from occubench.errors import UsageError
from occubench.play._turns import FieldKind, FormField, ToolView

MAX_FIELD_CHARS = 100_000
"""Longest text one field takes (a JSON argument of a few pages)."""
_INTEGER = re.compile(r"[+-]?\d{1,30}")
_KINDS = {
    "string": FieldKind.TEXT,
    "integer": FieldKind.INTEGER,
    "number": FieldKind.NUMBER,
    "boolean": FieldKind.BOOLEAN,
}
_TRUE = {"true", "yes", "y", "1"}
_FALSE = {"false", "no", "n", "0"}


class FormProblems(UsageError):
    """A form that cannot be sent as it is: every problem, one line each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems


def _type_text(schema: Mapping[str, Any]) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind == "array" and isinstance(schema.get("items"), Mapping):
        return f"array of {_type_text(schema['items'])}"
    return str(kind) if kind else "any JSON value"


def form_fields(parameters: Mapping[str, Any]) -> list[FormField]:
    """The form of a tool whose arguments' schema is ``parameters`` (an object schema)."""
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    fields = []
    for name, schema in properties.items():
        schema = schema if isinstance(schema, Mapping) else {}
        choices = schema.get("enum")
        if isinstance(choices, list) and choices:
            kind = FieldKind.CHOICE
        else:
            kind = _KINDS.get(str(schema.get("type")), FieldKind.JSON)
        fields.append(
            FormField(
                name=name,
                kind=kind,
                type_text=_type_text(schema),
                required=name in required,
                description=str(schema.get("description") or ""),
                choices=[json.dumps(c, ensure_ascii=False) for c in choices or []]
                if kind is FieldKind.CHOICE
                else [],
            )
        )
    return fields


def tool_view(name: str, description: str, parameters: Mapping[str, Any]) -> ToolView:
    """A tool with its form."""
    return ToolView(
        name=name,
        description=description,
        parameters=dict(parameters),
        fields=form_fields(parameters),
    )


def _json_value(text: str) -> Any:
    if len(text) > MAX_FIELD_CHARS:
        raise UsageError(f"longer than {MAX_FIELD_CHARS} characters")
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as e:
        raise UsageError(f"not JSON ({e})") from None
    if json_depth(value) > MAX_DEPTH:
        raise UsageError(f"nested more than {MAX_DEPTH} levels")
    return value


def field_value(field: FormField, text: str) -> Any:
    """The value a field's text gives.

    Raises:
        UsageError: the text is not a value of the field's kind (the message says why).
    """
    if len(text) > MAX_FIELD_CHARS:
        raise UsageError(f"longer than {MAX_FIELD_CHARS} characters")
    if field.kind is FieldKind.TEXT:
        return text
    given = text.strip()
    if field.kind is FieldKind.INTEGER:
        if not _INTEGER.fullmatch(given):
            raise UsageError(f"not a whole number: {given!r}")
        return int(given)
    if field.kind is FieldKind.NUMBER:
        try:
            number = float(given)
        except ValueError:
            raise UsageError(f"not a number: {given!r}") from None
        if not math.isfinite(number):
            raise UsageError(f"not a finite number: {given!r}")
        return int(number) if _INTEGER.fullmatch(given) else number
    if field.kind is FieldKind.BOOLEAN:
        if given.lower() in _TRUE:
            return True
        if given.lower() in _FALSE:
            return False
        raise UsageError(f"not true or false: {given!r}")
    if field.kind is FieldKind.CHOICE:  # a value, as JSON or as its text
        for choice in field.choices:
            value = json.loads(choice)
            if given in (choice, str(value)):
                return value
        raise UsageError(f"not one of {', '.join(field.choices)}: {given!r}")
    return _json_value(given)


def checked(tool: ToolView, arguments: dict[str, Any], checks: bool) -> dict[str, Any]:
    """The arguments once they pass the protocol's rule (``checks``: occubench's).

    Raises:
        FormProblems: the schema refuses them (every violation, one line each).
    """
    if not checks:
        return arguments
    spec = ToolSpec(name=tool.name, description=tool.description, parameters=tool.parameters)
    try:
        return checked_arguments([spec], tool.name, arguments)
    except BadToolCall as bad:
        lines = [line.removeprefix("- ") for line in bad.message.splitlines()]
        raise FormProblems(lines[1:] if len(lines) > 1 else lines) from None


def form_arguments(tool: ToolView, values: Mapping[str, str], checks: bool) -> dict[str, Any]:
    """The arguments of a filled form (``values``: field name -> text; empty: left out).

    Raises:
        FormProblems: a field's text is not of its kind, or the arguments break the
            protocol's rule; every problem is listed.
    """
    arguments: dict[str, Any] = {}
    problems = []
    for field in tool.fields:
        text = values.get(field.name, "")
        if not text.strip():
            continue
        try:
            arguments[field.name] = field_value(field, text)
        except UsageError as e:
            problems.append(f"{field.name}: {e}")
    if problems:
        raise FormProblems(problems)
    return checked(tool, arguments, checks)


def json_arguments(tool: ToolView, text: str, checks: bool) -> dict[str, Any]:
    """The arguments given as one JSON object.

    Raises:
        FormProblems: the text is not a JSON object, or the arguments break the rule.
    """
    try:
        value = _json_value(text.strip() or "{}")
    except UsageError as e:
        raise FormProblems([f"arguments: {e}"]) from None
    if not isinstance(value, dict):
        raise FormProblems([f"arguments: a JSON object is needed, not {type(value).__name__}"])
    return checked(tool, value, checks)

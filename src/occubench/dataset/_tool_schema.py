"""Tool schemas: JSON-Schema validity, what Inspect's ToolParams keeps, example arguments.

Inspect validates an agent's arguments against ``ToolParams`` before a tool runs,
and ``ToolParams`` silently drops JSON-Schema keywords it does not model (``oneOf``,
``const``, ``$ref``, ``minItems``, ...). We build the ToolParams here, and report
every keyword lost so that no constraint disappears unnoticed.
"""

from __future__ import annotations

import copy
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any, NamedTuple

import jsonschema
from pydantic import ValidationError

from occubench.dataset._models import ToolSpec

if TYPE_CHECKING:
    from inspect_ai.tool import ToolInfo, ToolParams

JSON_SCHEMA_KEYWORDS = frozenset(jsonschema.Draft7Validator.META_SCHEMA["properties"]) | {
    "$ref",
    "$defs",
    "$schema",
    "$id",
    "$comment",
}
"""The keywords a JSON Schema may hold (draft 7, and the later ``$defs``)."""


def is_schema_keyword(path: str) -> bool:
    """Whether the last step of a keyword path (``$.properties.x.minItems``) is a keyword."""
    return path.rsplit(".", 1)[-1] in JSON_SCHEMA_KEYWORDS


class FilledSchema(NamedTuple):
    """A tool's parameter schema with every top-level property described."""

    schema: dict[str, Any]
    """The filled copy."""
    filled: list[str]
    """The names of the properties that were given a description."""


def fill_descriptions(schema: dict[str, Any]) -> FilledSchema:
    """Copy ``schema`` with a description on every top-level property that lacks one.

    Inspect refuses a tool parameter without a description, and many release configs
    have some (482 of 2932 parameters). The filler is the parameter name in words.
    """
    filled = copy.deepcopy(schema)
    names = []
    for name, prop in (filled.get("properties") or {}).items():
        if isinstance(prop, dict) and not prop.get("description"):
            prop["description"] = name.replace("_", " ").strip().capitalize() + "."
            names.append(name)
    return FilledSchema(filled, names)


def tool_params(spec: ToolSpec) -> ToolParams:
    """The Inspect parameters of a tool (descriptions filled, see ``fill_descriptions``)."""
    from inspect_ai.tool import ToolParams

    return ToolParams.model_validate(fill_descriptions(spec.parameters).schema)


def lost_keywords(original: Any, kept: Any, path: str = "$") -> list[str]:
    """Paths of the schema keywords present in ``original`` but absent from ``kept``."""
    lost: list[str] = []
    if isinstance(original, dict) and isinstance(kept, dict):
        for key, value in original.items():
            if key not in kept:
                lost.append(f"{path}.{key}")
            else:
                lost += lost_keywords(value, kept[key], f"{path}.{key}")
    elif isinstance(original, list) and isinstance(kept, list):
        for i, (a, b) in enumerate(zip(original, kept, strict=False)):
            lost += lost_keywords(a, b, f"{path}[{i}]")
    return lost


class FieldProblem(NamedTuple):
    """What is wrong with one field."""

    field: str
    """Its dotted path (relative to the record it is in)."""
    message: str
    """What is wrong."""


class ToolCheck(NamedTuple):
    """What checking one tool's parameter schema found."""

    errors: list[FieldProblem]
    """Problems that make the tool unusable, relative to the tool."""
    lost: list[str]
    """The keyword paths Inspect would drop (a warning, not an error)."""


CHECKED_TOOLS = 4096
"""Tool checks a process keeps (by the tool's definition): a dataset loaded again (the
estimate, each shard forked from the run) checks only tools it has not seen."""

_checked: OrderedDict[str, ToolCheck] = OrderedDict()


def check_tool(spec: ToolSpec) -> ToolCheck:
    """Validate one tool's parameter schema: JSON Schema, then the tool Inspect builds of it.

    The answer depends on the definition alone (name, description, parameters), so it is
    kept per definition (``CHECKED_TOOLS``, the oldest dropped first): about 0.5 ms of
    schema validation per tool, paid once per process.
    """
    try:  # NaN and 1.0 stay apart from null and 1: every value as JSON writes it
        key = json.dumps([spec.name, spec.description, spec.parameters])
    except (TypeError, ValueError):  # not JSON (built in code): checked, not kept
        return _check(spec)
    found = _checked.get(key)
    if found is None:
        found = _checked[key] = _check(spec)
        if len(_checked) > CHECKED_TOOLS:
            _checked.popitem(last=False)
    return ToolCheck(list(found.errors), list(found.lost))


def _check(spec: ToolSpec) -> ToolCheck:
    """``check_tool``'s work, for a definition it has not kept."""
    from inspect_ai.tool import ToolDef, ToolParams

    errors: list[FieldProblem] = []
    schema = spec.parameters
    try:
        jsonschema.Draft7Validator.check_schema(schema)
    except jsonschema.SchemaError as e:
        where = ".".join(str(p) for p in e.absolute_path)
        errors.append(
            FieldProblem(f"parameters.{where}".rstrip("."), f"invalid JSON Schema: {e.message}")
        )
        return ToolCheck(errors, [])
    if schema.get("type", "object") != "object":
        errors.append(
            FieldProblem("parameters.type", f"must be 'object', got {schema.get('type')!r}")
        )
        return ToolCheck(errors, [])
    filled = fill_descriptions(schema).schema
    try:
        params = ToolParams.model_validate(filled)
    except ValidationError as e:
        for err in e.errors():
            where = ".".join(str(p) for p in err["loc"])
            errors.append(
                FieldProblem(f"parameters.{where}", f"not usable as a tool schema: {err['msg']}")
            )
        return ToolCheck(errors, [])
    try:  # the tool as a run builds it: bound to the tool layer, and as the agent is shown it
        ToolDef(_never_called, spec.name, spec.description or spec.name, params, max_output=0)
        tool_info(spec, fill=False)
    except (ValueError, TypeError) as e:  # pydantic's ValidationError is a ValueError
        errors.append(FieldProblem("parameters", f"Inspect cannot make a tool of it: {e}"))
        return ToolCheck(errors, [])
    kept = params.model_dump(exclude_none=True)
    return ToolCheck(errors, lost_keywords(filled, kept))


async def _never_called(**arguments: Any) -> str:
    """The callable of a tool built only to see that Inspect accepts it."""
    raise NotImplementedError


def example_value(name: str, schema: dict[str, Any]) -> Any:
    """A plausible value for a JSON-Schema property (enum, default, or by type)."""
    for key in ("enum", "examples"):
        if schema.get(key):
            return schema[key][0]
    if "default" in schema and schema["default"] is not None:
        return schema["default"]
    kind = schema.get("type", "string")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "integer":
        return max(1, int(schema.get("minimum", 1)))
    if kind == "number":
        return float(schema.get("minimum", 1.0))
    if kind == "boolean":
        return True
    if kind == "array":
        return [example_value(name, schema.get("items") or {})]
    if kind == "object":
        return example_arguments(schema)
    return f"{name.upper()}-1"


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments for every required property of an object schema."""
    props = schema.get("properties") or {}
    return {name: example_value(name, props.get(name) or {}) for name in schema.get("required", [])}


def tool_info(spec: ToolSpec, *, fill: bool = True) -> ToolInfo:
    """The tool as the agent's model is offered it.

    ``fill`` gives undescribed parameters a description made from their name (as the
    Inspect tools need); without it the tool goes out as the env defines it (the
    release sends ``action_set_definitions`` unchanged: a missing description is "").
    """
    from inspect_ai.tool import ToolInfo, ToolParams

    parameters = fill_descriptions(spec.parameters).schema if fill else spec.parameters
    return ToolInfo(
        name=spec.name,
        description=spec.description or ("" if not fill else spec.name),
        parameters=ToolParams.model_validate(parameters or {"type": "object", "properties": {}}),
    )

"""Command options generated from the settings' fields (``RunConfig``, ``EvalOptions``).

A command that takes settings declares only its own options and ``**settings``;
``with_settings`` gives it one typer option per field of the models it names, after its
own: the name is the field's with dashes, plus the names it also accepts (its aliases)
and those of its ``Cli`` metadata; the help is the field's description; the default is
the field's. Values arrive as the command line gives them (text for choices, lists and
JSON objects; typer's own types for numbers and flags) and are validated when the
command builds its models, so that a bad value is one clear line naming the setting
(``user_errors``):

- a choice (an enum) is text shown as ``<A|B|C>``, matched case-insensitively by the
  model (click's own choice check would echo the raw input to the terminal);
- a list is comma-separated text;
- a JSON object is text;
- ``bool | None`` is ``--x/--no-x`` with no default (None: the protocol's value).
"""

from __future__ import annotations

import inspect
import json
import types
import typing
from collections.abc import Callable, Collection, Mapping
from enum import Enum
from typing import Any, TypeVar

import typer
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from occubench.config import aliases, cli_of, default_of
from occubench.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])

EXECUTORS = ("local", "ray")
"""The values of ``occubench.scale.Executor``, for ``--executor`` (the runner loads when used)."""
CLIENT_IS_AGENT = (
    "agent",
    "agent_args",
    "agent_command",
    "agent_time_limit",
    "max_turns",
    "stop_on_finish",
    "carry_reasoning",
    "agent_errors_end_loop",
    "agent_max_tokens",
)
"""``RunConfig`` fields of our agent loop, which a server whose client is the agent has no
option for (``serve``, ``openenv``)."""


def executor_named(value: str) -> str:
    """``--executor``'s value as one of ``EXECUTORS`` (any case), as a setting's choice is read.

    Raises:
        UsageError: not one of them.
    """
    if value.lower() not in EXECUTORS:
        raise UsageError(f"executor: {value!r} is not one of {', '.join(EXECUTORS)}")
    return value.lower()


def _dashed(name: str) -> str:
    return "--" + name.replace("_", "-")


def _parts(annotation: Any) -> tuple[Any, bool]:
    """A field's type without None, and whether None is allowed."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1:
            return args[0], len(args) < len(typing.get_args(annotation))
    return annotation, False


def _command_line_value(default: Any) -> Any:
    """A JSON default as an option's default: lists comma-separated, objects as JSON text."""
    if isinstance(default, list):
        return ",".join(str(v) for v in default) or None
    if isinstance(default, dict):
        return json.dumps(default) if default else None
    return default


def _option_type(field: FieldInfo) -> tuple[Any, str | None]:
    """The type typer parses a field's value as, and its metavar (None: typer's own)."""
    kind, optional = _parts(field.annotation)
    if isinstance(kind, type) and issubclass(kind, Enum):
        return str | None if optional else str, "<" + "|".join(str(m.value) for m in kind) + ">"
    if typing.get_origin(kind) is list:
        (item,) = typing.get_args(kind)
        return str | None, ("N" if item is int else "NAME") + ",..."
    if typing.get_origin(kind) is dict:
        return str | None, "JSON"
    if kind in (bool, int, float, str):
        return field.annotation, None
    if typing.get_origin(kind) in (typing.Union, types.UnionType, typing.Literal):
        return str | None if optional else str, None  # e.g. int | Literal["epoch"]
    raise TypeError(f"no command-line type for a setting of type {field.annotation!r}")


def setting_option(name: str, field: FieldInfo, note: str | None = None) -> inspect.Parameter:
    """One field as a typer option parameter (see the module's docstring).

    ``note`` is added to the help: what the setting means for this command in particular.
    """
    cli = cli_of(field)
    annotation, metavar = _option_type(field)
    names = [_dashed(name), *(_dashed(a) for a in aliases(name, field)), *cli.names]
    if _parts(field.annotation)[0] is bool:
        names = [f"{n}/--no-{n[2:]}" for n in names]
    default = default_of(field)
    required = default is PydanticUndefined
    text = " ".join(t for t in (field.description, note) if t)
    option = typer.Option(
        ... if required else _command_line_value(default),
        *names,
        help=text or None,
        metavar=cli.metavar or metavar,
        hidden=cli.hidden,
    )
    return inspect.Parameter(
        name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=annotation
    )


def setting_parameters(
    *models: type[BaseModel],
    only: Collection[str] | None = None,
    exclude: Collection[str] = (),
    notes: Mapping[str, str] | None = None,
) -> list[inspect.Parameter]:
    """The options of the models' fields, in field order (``only`` some, or all but ``exclude``)."""
    chosen = [
        (name, field)
        for model in models
        for name, field in model.model_fields.items()
        if (only is None or name in only) and name not in exclude
    ]
    return [setting_option(name, field, (notes or {}).get(name)) for name, field in chosen]


def set_signature(command: Callable[..., Any], parameters: list[inspect.Parameter]) -> None:
    """Give a command the parameters typer reads (its signature and its type hints).

    Every parameter is keyword-only: typer passes each by name.

    Raises:
        TypeError: two parameters of one name.
    """
    names = [p.name for p in parameters]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise TypeError(f"{command.__name__}: parameters named twice: {', '.join(repeated)}")
    keyword = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in parameters]
    command.__signature__ = inspect.Signature(keyword)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}


def own_parameters(command: Callable[..., Any]) -> list[inspect.Parameter]:
    """A command's declared parameters, its ``**settings`` left out."""
    declared = inspect.signature(command, eval_str=True).parameters.values()
    return [p for p in declared if p.kind is not inspect.Parameter.VAR_KEYWORD]


def with_settings(
    *models: type[BaseModel],
    only: Collection[str] | None = None,
    exclude: Collection[str] = (),
    notes: Mapping[str, str] | None = None,
) -> Callable[[F], F]:
    """Give a command (``def cmd(..., **settings)``) an option per field of ``models``.

    The options come after the command's own; their values reach it in ``settings``
    by field name (see ``setting_parameters`` for ``only``, ``exclude``, ``notes``).
    """

    def decorate(command: F) -> F:
        settings = setting_parameters(*models, only=only, exclude=exclude, notes=notes)
        set_signature(command, [*own_parameters(command), *settings])
        return command

    return decorate

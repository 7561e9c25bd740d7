"""How a setting is named outside Python: command-line spellings, accepted names, parameters.

A setting is one pydantic field (``RunConfig``, ``EvalOptions``, ``ProtocolPoints``).
Everything else that names it is generated from the field: the ``occubench`` options
(``occubench.cli``), the ``@task`` parameters (``occubench.task``, ``-T name=value``), the
sweep-file keys and the settings reference of the docs. What a field cannot say about
its command-line option (a shorter extra name, a metavar, being hidden) is declared next
to it as ``Annotated[..., Cli(...)]`` metadata, which pydantic keeps in
``FieldInfo.metadata`` and otherwise ignores. Nothing here depends on a CLI framework.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any

from pydantic import AliasChoices, BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined, to_jsonable_python


@dataclass(frozen=True)
class Cli:
    """What a setting's command-line option needs beyond its field.

    The option's first name is always the field's name with dashes (``--task-ids``);
    names the field also accepts (its validation aliases) are further option names.
    """

    names: tuple[str, ...] = ()
    """Further option names, e.g. ``("--tasks",)`` for ``task_ids``."""
    metavar: str | None = None
    """How the value is shown in the help (default: from the field's type)."""
    hidden: bool = False
    """Left out of the help (still accepted)."""


def cli_of(field: FieldInfo) -> Cli:
    """The command-line declaration of a field (an empty ``Cli`` when it has none)."""
    return next((m for m in field.metadata if isinstance(m, Cli)), Cli())


def aliases(name: str, field: FieldInfo) -> list[str]:
    """The other names the field ``name`` accepts as input (older names kept working)."""
    alias = field.validation_alias
    choices = alias.choices if isinstance(alias, AliasChoices) else [alias] if alias else []
    return [c for c in choices if isinstance(c, str) and c != name]


def setting_names(model: type[BaseModel]) -> dict[str, str]:
    """Every name a model's settings are accepted under (field names and aliases) -> field."""
    names = {name: name for name in model.model_fields}
    for name, field in model.model_fields.items():
        names.update({alias: name for alias in aliases(name, field)})
    return names


def default_of(field: FieldInfo) -> Any:
    """A field's default as JSON (an enum as its value), or ``PydanticUndefined`` if required."""
    value = field.get_default(call_default_factory=True)
    return value if value is PydanticUndefined else to_jsonable_python(value)


def keyword_parameters(model: type[BaseModel]) -> list[inspect.Parameter]:
    """A model's fields as keyword-only parameters: name, JSON default, annotation.

    Used for the signature of a function that takes the fields as ``**kwargs`` (the
    ``@task``s), so that what reads signatures (Inspect's task registry) sees every
    field with its default.
    """
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty
            if (default := default_of(field)) is PydanticUndefined
            else default,
            annotation=field.annotation,
        )
        for name, field in model.model_fields.items()
    ]

"""Generation settings per role: one model for ``occubench run`` options and sweep files.

A role's settings are Inspect ``GenerateConfig`` fields (``temperature``,
``reasoning_effort``, ``top_p``, ...) given on top of the run's connections and
retries. ``occubench run`` takes them as ``--temperature ROLE=VALUE`` (a bare value is
the agent's), a sweep file as ``generate:`` of an agent, simulator or verifier (and
``agent_generate:`` for every agent). ``max_tokens`` is a protocol point per role
(``agent_max_tokens``, ...), so ``--max-tokens ROLE=N`` sets those fields instead.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from occubench.errors import UsageError
from occubench.roles import Role

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig

T = TypeVar("T")

GENERATE_ROLES = (Role.AGENT, Role.SIMULATOR, Role.VERIFIER, Role.SIMULATOR_FALLBACK)
"""The roles a run's generation settings may name."""


def checked_generate(value: Mapping[str, Any]) -> GenerateConfig:
    """The ``GenerateConfig`` of these fields; unknown fields and bad values raise.

    Its set fields (``model_fields_set``) are the ones given.

    Raises:
        UsageError: a field GenerateConfig does not have.
        ValidationError: a value it refuses.
    """
    from inspect_ai.model import GenerateConfig  # Inspect: when a value is checked

    unknown = sorted(set(value) - set(GenerateConfig.model_fields))
    if unknown:
        raise UsageError(f"unknown generation settings: {', '.join(unknown)}")
    return GenerateConfig.model_validate(value)  # bad values are errors now, not at run time


def role_values(
    option: str, given: Sequence[str] | None, parse: Callable[[str], T]
) -> dict[Role, T]:
    """Values per role of a repeatable ``ROLE=VALUE`` option (a bare ``VALUE``: the agent).

    Raises:
        UsageError: an unknown role, a value ``parse`` refuses, a role given twice.
    """
    chosen: dict[Role, T] = {}
    for item in given or []:
        name, sep, text = item.partition("=")
        role_name, text = (name.strip().lower(), text) if sep else (Role.AGENT.value, item)
        roles = {r.value: r for r in GENERATE_ROLES}
        if role_name not in roles:
            raise UsageError(
                f"{option} {item!r}: unknown role {role_name!r}; use {', '.join(roles)} "
                f"(e.g. {option} simulator=VALUE)"
            )
        role = roles[role_name]
        if role in chosen:
            raise UsageError(f"{option} given twice for the {role.value}")
        try:
            chosen[role] = parse(text.strip())
        except ValueError as e:
            raise UsageError(f"{option} {item!r}: {e}") from None
    return chosen

"""Generation settings per role: one model for ``occubench run`` options and sweep files.

A role's settings are Inspect ``GenerateConfig`` fields (``temperature``,
``reasoning_effort``, ``top_p``, ...) given on top of the run's connections and
retries. ``occubench run`` takes them as ``--temperature ROLE=VALUE`` (a bare value is
the agent's), a sweep file as ``generate:`` of an agent, simulator or verifier (and
``agent_generate:`` for every agent). ``max_tokens`` is a protocol point per role
(``agent_max_tokens``, ...), so ``--max-tokens ROLE=N`` sets those fields instead.
``reasoning_tokens`` (the thinking budget) is at least 1 token wherever it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from occubench.errors import UsageError
from occubench.roles import Role

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig

    from occubench.config._protocol import ProtocolPoints

T = TypeVar("T")

GENERATE_ROLES = (Role.AGENT, Role.SIMULATOR, Role.VERIFIER, Role.SIMULATOR_FALLBACK, Role.USER)
"""The roles a run's generation settings may name."""

MAX_TOKENS_POINTS = {
    Role.AGENT: "agent_max_tokens",
    Role.SIMULATOR: "simulator_max_tokens",
    Role.VERIFIER: "verifier_max_tokens",
}
"""The protocol point (``ProtocolPoints`` field) that sets max_tokens of a role's calls."""


def role_settings(
    roles: Iterable[Role], generate: Callable[[Role], GenerateConfig], points: ProtocolPoints
) -> dict[Role, GenerateConfig]:
    """Each role's generation settings with its token limit, as the run's calls carry them.

    ``generate`` gives a role's settings (``RunSpec.generate_config``); the limit is the
    role's protocol point (``MAX_TOKENS_POINTS``; the fallback simulator's is the
    simulator's), left out when it is 0 (not set).
    """
    from inspect_ai.model import GenerateConfig

    settings = {}
    for role in roles:
        config = generate(role)
        field = MAX_TOKENS_POINTS.get(Role.SIMULATOR if role is Role.SIMULATOR_FALLBACK else role)
        limit = getattr(points, field) if field else 0
        settings[role] = config.merge(GenerateConfig(max_tokens=limit)) if limit else config
    return settings


def checked_generate(value: Mapping[str, Any]) -> GenerateConfig:
    """The ``GenerateConfig`` of these fields; unknown fields and bad values raise.

    Its set fields (``model_fields_set``) are the ones given.

    Raises:
        UsageError: a field GenerateConfig does not have, a thinking budget below 1.
        ValidationError: a value it refuses.
    """
    from inspect_ai.model import GenerateConfig  # Inspect: when a value is checked

    unknown = sorted(set(value) - set(GenerateConfig.model_fields))
    if unknown:
        raise UsageError(f"unknown generation settings: {', '.join(unknown)}")
    config = GenerateConfig.model_validate(value)  # bad values are errors now, not at run time
    if config.reasoning_tokens is not None and config.reasoning_tokens < 1:
        raise UsageError(f"reasoning_tokens must be 1 or more, not {config.reasoning_tokens}")
    return config


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

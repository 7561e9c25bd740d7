"""Clamp notes: where a role's reasoning setting is not what its provider is sent.

Inspect's providers translate ``reasoning_effort`` and ``reasoning_tokens`` per model, in
their code, not a table (``occubench.providers._requests`` says how, provider by provider).

Rather than a copy of these rules, ``clamp_notes`` builds the role's model as Inspect
does (no request is made) and asks its provider's own request builder what the request
holds with the setting and without it; what the setting changes is what is sent.
Providers without a request builder known to ``occubench.providers`` (its ``PROBES``)
get no notes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from occubench.config._generate import role_settings
from occubench.errors import UsageError
from occubench.providers import EFFORT_FIELDS, REASONING_FIELDS, Request, provider_probe
from occubench.roles import Role

if TYPE_CHECKING:
    from inspect_ai.model import GenerateConfig, ModelAPI

    from occubench.config._protocol import ProtocolPoints

PROBE_API_KEY = "occubench-clamp-probe"
"""Key the probe builds a model with: no request is made, and a missing key is the
preflight's to report."""


class ReasoningSetting(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """A ``GenerateConfig`` field a provider may not send as asked."""

    REASONING_EFFORT = "reasoning_effort"
    """``--reasoning-effort``: none, minimal, low, medium, high, xhigh, max."""
    REASONING_TOKENS = "reasoning_tokens"
    """``--reasoning-tokens``: the thinking budget in tokens."""

    @property
    def words(self) -> str:
        """The setting as a note names it (``reasoning effort``)."""
        return self.value.replace("_", " ")


class ClampNote(BaseModel):
    """A role's setting that its provider is sent otherwise, or not at all."""

    role: Role = Field(description="The role whose model is asked.")
    model: str = Field(description="The role's Inspect model name.")
    setting: ReasoningSetting = Field(description="The GenerateConfig field.")
    asked: str = Field(description="The value the run asks for.")
    sent: str | None = Field(
        description="What the request carries instead (wire field and value where it is "
        "not an effort level); None: nothing, the setting is dropped."
    )
    why: str = Field(description="Who changes it, in a few words.")

    def line(self) -> str:
        """The note as one line, e.g. ``agent deepseek/x: reasoning effort xhigh sent as max``."""
        outcome = "not sent" if self.sent is None else f"sent as {self.sent}"
        return (
            f"{self.role.value} {self.model}: {self.setting.words} {self.asked} {outcome} "
            f"({self.why})"
        )


def clamp_notes(role: Role, model: str, config: GenerateConfig) -> list[ClampNote]:
    """The clamp notes of one role's model under its generate config.

    ``config`` is what the role's calls carry (its ``max_tokens`` too, if the run sets
    one; else the provider's default for the config is taken, as Inspect does). A model
    Inspect cannot build (an unknown provider, a missing SDK) gets no notes: the
    preflight reports it.

    Raises:
        UsageError: a setting Inspect or the provider refuses for this model, said
            before any request: Inspect's ``PrerequisiteError`` (``reasoning_tokens`` on
            Claude 4.7+), and Anthropic's thinking budget out of its documented range.
    """
    asked = {
        setting: value
        for setting in ReasoningSetting
        if (value := getattr(config, setting.value)) is not None
    }
    if not asked:
        return []
    from inspect_ai._util.error import PrerequisiteError

    provider = model.split("/", 1)[0]
    notes = []
    with _quietly():
        api = _built(model, config)
        probe = None if api is None else provider_probe(api)
        if api is None or probe is None:
            return []
        if config.max_tokens is None:  # as Inspect's Model.generate fills it in
            config = config.model_copy(
                update={"max_tokens": api.max_tokens_for_config(config) or api.max_tokens()}
            )
        try:
            request = probe.request(api, config)
            if probe.refusal is not None and (refused := probe.refusal(request)) is not None:
                raise UsageError(f"{role.value} {model}: {refused}")
            for setting, value in asked.items():
                without = probe.request(api, config.model_copy(update={setting.value: None}))
                note = _note(str(value), _changed(request, without))
                if note is not None:
                    sent, why = note
                    notes.append(
                        ClampNote(
                            role=role,
                            model=model,
                            setting=setting,
                            asked=str(value),
                            sent=sent,
                            why=f"Inspect's {provider} provider {why}",
                        )
                    )
        except PrerequisiteError as e:
            raise UsageError(f"{role.value} {model}: {' '.join(str(e).split())}") from None
    return notes


def run_clamp_notes(
    models: Mapping[Role, str],
    generate: Callable[[Role], GenerateConfig],
    points: ProtocolPoints,
) -> list[ClampNote]:
    """The clamp notes of a run: each role's model, settings and max_tokens (``points``).

    Raises:
        UsageError: a setting refused for a role's model (``clamp_notes``).
    """
    settings = role_settings(models, generate, points)
    return [
        note for role, model in models.items() for note in clamp_notes(role, model, settings[role])
    ]


def _built(model: str, config: GenerateConfig) -> ModelAPI | None:
    """The provider of ``model`` as Inspect builds it (None: it cannot be built here)."""
    from inspect_ai._util.error import PrerequisiteError
    from inspect_ai.model import get_model

    try:
        return get_model(model, config=config, memoize=False, api_key=PROBE_API_KEY).api
    except (PrerequisiteError, ValueError, ImportError):
        return None


def _changed(request: Request, without: Request) -> Request:
    """The paths whose values a setting changes (None: a field it removes)."""
    return {
        path: request.get(path)
        for path in request.keys() | without.keys()
        if request.get(path) != without.get(path)
    }


def _note(asked: str, changed: Request) -> tuple[str | None, str] | None:
    """What was sent for ``asked`` and why, when it is not ``asked`` itself (None: it is).

    Nothing changed: the setting is dropped, unless it asks for no reasoning (``none``),
    which a request without reasoning fields grants where the model does not reason by
    default. Otherwise the reasoning fields it changed say what is sent.
    """
    if not changed:
        return None if asked == "none" else (None, "drops it")
    wire = {  # the reasoning fields it sets (one it displaces is no part of what is sent)
        _field(p): v
        for p, v in sorted(changed.items())
        if _field(p) in REASONING_FIELDS and v is not None
    }
    if asked == "none" or not wire:  # sent in another shape (thinking disabled, ...)
        return None
    if any(str(v).lower() == asked.lower() for v in wire.values()):
        return None
    if len(wire) == 1 and next(iter(wire)) in EFFORT_FIELDS:
        return str(next(iter(wire.values()))).lower(), "maps it"
    return ", ".join(f"{field}={v}" for field, v in wire.items()), "maps it"


def _field(path: str) -> str:
    """The wire field a dotted path ends in (``thinking.budget_tokens``: ``budget_tokens``)."""
    return path.rsplit(".", 1)[-1]


@contextmanager
def _quietly() -> Iterator[None]:
    """Inspect's output left for the run itself: nothing is printed while probing.

    Its console is quiet (the hooks banner of the first model built, which the run does
    not show either), and its providers' warnings are not logged nor marked as given
    (``inspect_ai._util.logger.warn_once`` warns once per process: a probe's warning would
    otherwise be printed now and never in the run's own log).
    """
    import rich
    from inspect_ai._util import logger as inspect_logger

    console = rich.get_console()
    warned, quiet = list(inspect_logger._warned), console.quiet
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    console.quiet = True
    try:
        yield
    finally:
        console.quiet = quiet
        logging.disable(previous)
        inspect_logger._warned[:] = warned

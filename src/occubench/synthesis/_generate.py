"""Ask the generator for one JSON object, parse it robustly, re-ask when it is unusable.

The reply may hold the object in ``<json>`` tags, in a fenced block, or bare, or in prose
(the first ``{`` must then start one whole object: a reply cut off is not read as an
inner object that happens to be complete). A reply
that holds no object, that does not fit the stage's pydantic model, or whose value a
stage check rejects, is answered with the ``reask`` prompt naming the problems, up to
``retries`` times (``occubench.calls._asking.ask``). Provider errors are not caught: they end
the stage and a rerun redoes the item.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, TypeVar

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, GenerateConfig, Model
from pydantic import BaseModel, ValidationError

from occubench.calls import ask
from occubench.roles import Role
from occubench.simulator import ObservationParseError, parse_observation
from occubench.synthesis._artifacts import StageResult, TokenUsage
from occubench.synthesis._prompts import REASK, SYSTEM, render_prompt
from occubench.text import json_text

MAX_LISTED_PROBLEMS = 12

_TAGGED = re.compile(r"<json>(.*?)</json>", re.DOTALL | re.IGNORECASE)

M = TypeVar("M", bound=BaseModel)


class ReplyError(ValueError):
    """The generator's reply holds no object of the expected shape, or a stage check failed.

    ``problems`` lists what is wrong; ``value`` is the parsed object when it parsed but a
    stage check rejected it.
    """

    def __init__(self, problems: list[str], value: BaseModel | None = None) -> None:
        super().__init__("\n".join(problems))
        self.problems = problems
        self.value = value


def parse_reply(text: str, model: type[M]) -> M:
    """The object in ``text`` (last ``<json>`` block, else fenced, else bare) as ``model``.

    Raises:
        ReplyError: no JSON object, or it does not fit ``model`` (the message lists why).
    """
    tagged = _TAGGED.findall(text)
    data = _object_in(tagged[-1] if tagged else text)
    try:
        return model.model_validate(data)
    except ValidationError as e:
        raise ReplyError([format_validation(e)]) from None


def _object_in(text: str) -> Any:
    """The reply's JSON object: the whole reply's, else the one prose's first ``{`` starts.

    Raises:
        ReplyError: neither is one whole JSON object.
    """
    try:
        return parse_observation(text)
    except ObservationParseError:
        pass
    decoded = json_text(text)
    start = decoded.find("{")
    try:
        if start >= 0:
            return json.JSONDecoder().raw_decode(decoded, start)[0]
    except (json.JSONDecodeError, RecursionError):
        pass
    preview = text.strip().replace("\n", " ")[:120]
    raise ReplyError([f"the reply holds no JSON object (it starts: {preview!r})"])


def format_validation(error: ValidationError) -> str:
    """One line per pydantic error: ``path: message``."""
    lines = []
    for err in error.errors()[:MAX_LISTED_PROBLEMS]:
        where = ".".join(str(p) for p in err["loc"]) or "(top level)"
        lines.append(f"- {where}: {err['msg']}")
    more = error.error_count() - MAX_LISTED_PROBLEMS
    return "\n".join(lines + ([f"- ... and {more} more"] if more > 0 else []))


async def generate_json(
    model: Model,
    prompt: str,
    output: type[M],
    *,
    retries: int,
    check: Callable[[M], list[str]] | None = None,
    seed: int | None = None,
) -> StageResult[M]:
    """Ask ``model`` for an object of type ``output``; re-ask up to ``retries`` times.

    Args:
        model: The generator.
        prompt: The stage's filled prompt (the user message; the system prompt is fixed).
        output: The pydantic model of the expected object.
        retries: Re-asks after an unusable reply.
        check: Extra validation of a parsed value; the problems it returns are re-asked.
        seed: Sampling seed passed to the provider (when it supports one).

    Returns:
        The last parsed value (None if no reply parsed), the problems it still has
        (empty when usable) and the generator's tokens.
    """
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=render_prompt(SYSTEM)),
        ChatMessageUser(content=prompt),
    ]

    def read(text: str) -> M:
        value = parse_reply(text, output)
        problems = check(value) if check else []
        if problems:
            raise ReplyError(problems, value)
        return value

    def reask(error: Exception) -> str:
        problems = error.problems if isinstance(error, ReplyError) else [str(error)]
        listed = "\n".join(p if p.startswith("- ") else f"- {p}" for p in problems)
        return render_prompt(REASK, problem=listed)

    asked = await ask(
        model,
        messages,
        read,
        attempts=retries + 1,
        reask=reask,
        errors=(ReplyError,),
        config=GenerateConfig(seed=seed),
    )
    usage = TokenUsage()
    for reply in asked.outputs:
        usage += TokenUsage.of(reply.usage)
    failed = asked.error if isinstance(asked.error, ReplyError) else None
    value = asked.value if failed is None else failed.value
    return StageResult[output](  # type: ignore[valid-type]
        value=value,
        issues=failed.problems if failed is not None else [],
        usage={Role.GENERATOR.value: usage},
    )

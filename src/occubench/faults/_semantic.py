"""Semantic faults: the simulator role rewrites an observation with subtly wrong values."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from inspect_ai.model import ChatMessage, Model

SEMANTIC_FAULT_PROMPT = """\
You prepare test data for a robustness study of software agents.
You receive the true JSON response of a business system's tool. Return a copy in which one \
or two values are subtly wrong but plausible: swap a unit (metres for feet, dollars for \
cents), shift a date by a few days, transpose two digits, or round a figure the wrong way. \
Keep every key, every identifier and every type; the JSON must stay valid and look normal. \
Reply with the altered JSON inside <observation></observation> tags and nothing else."""

SEMANTIC_REASK = (
    "Your reply held no JSON object. Reply with the altered JSON inside "
    "<observation></observation> tags and nothing else."
)


async def rewrite_observation(
    model: Model, tool: str, observation: Any, *, retries: int, cache: bool = False
) -> Any:
    """Ask the simulator role for a subtly wrong copy of ``observation``.

    Raises:
        SimulatorError: when no reply holds a JSON object.
    """
    # Inspect and the model rooms: when a fault is written, not when the settings are read
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    from occubench.calls import ask
    from occubench.simulator import ObservationParseError, SimulatorError, parse_observation

    messages: list[ChatMessage] = [
        ChatMessageSystem(content=SEMANTIC_FAULT_PROMPT),
        ChatMessageUser(
            content=json.dumps({"tool": tool, "observation": observation}, ensure_ascii=False)
        ),
    ]
    asked = await ask(
        model,
        messages,
        parse_observation,
        attempts=retries + 1,
        reask=lambda _: SEMANTIC_REASK,
        errors=(ObservationParseError,),
        cache=cache,
    )
    if asked.value is None:
        raise SimulatorError(f"simulator gave no semantic variant for {tool!r}: {asked.problem}")
    return asked.value

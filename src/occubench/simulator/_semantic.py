"""Semantic faults: the simulator role rewrites an observation with subtly wrong values."""

from __future__ import annotations

import json
from typing import Any

from inspect_ai.model import ChatMessageSystem, ChatMessageUser, Model

from occubench.simulator._parse import ObservationParseError, parse_observation
from occubench.simulator._simulator import SimulatorError

SEMANTIC_FAULT_PROMPT = """\
You prepare test data for a robustness study of software agents.
You receive the true JSON response of a business system's tool. Return a copy in which one \
or two values are subtly wrong but plausible: swap a unit (metres for feet, dollars for \
cents), shift a date by a few days, transpose two digits, or round a figure the wrong way. \
Keep every key, every identifier and every type; the JSON must stay valid and look normal. \
Reply with the altered JSON inside <observation></observation> tags and nothing else."""


async def corrupt_observation(
    model: Model, tool: str, observation: dict[str, Any], *, retries: int, cache: bool = False
) -> dict[str, Any]:
    """Ask the simulator role for a subtly wrong copy of ``observation``.

    Raises:
        SimulatorError: when no reply holds a JSON object.
    """
    messages = [
        ChatMessageSystem(content=SEMANTIC_FAULT_PROMPT),
        ChatMessageUser(
            content=json.dumps({"tool": tool, "observation": observation}, ensure_ascii=False)
        ),
    ]
    problem = ""
    for _ in range(retries + 1):
        output = await model.generate(messages, cache=cache)
        try:
            return parse_observation(output.completion)
        except ObservationParseError as e:
            problem = str(e)
    raise SimulatorError(f"simulator gave no semantic variant for {tool!r}: {problem}")

"""The shape of an observation against an example: what "fits ``example_output``" means.

One rule, used by the twins' tests and by anyone holding an observation to its tool's
``example_output`` (or to an error example of a config's prompt):

- Types are JSON types: object, array, string, number (an integer and a float are both
  numbers), boolean. The observation has the example's type at each place.
- Objects have the same keys at each level: a key the example has and the observation
  lacks is missing, a key the observation adds is extra. An empty example object ``{}``
  says nothing of its keys: any object fits it.
- Arrays: every item of the observation's array fits the example array's first item; an
  empty example array says nothing of its items.
- Maps keyed by data: below the top, an observation object that shares no key with a
  non-empty example object is read as a map whose keys are data (component names,
  variable names: the example's keys only illustrate them); each of its values fits the
  example's first value, as a list's items do. An object sharing some key is a record
  and has the example's keys exactly. The top level is always a record.
- Null is "no value": a null in the example admits any value there (the example leaves
  its type open), and a null in the observation fits any example value (a field the
  record has no value for). An optional field is thus written as present and null, never
  as a key left out.
- Free parts (``free``, as a twin marks them): the config leaves the whole value open, so
  only its type is held to the example's, not its keys or items.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from occubench.dataset import EnvConfig
from occubench.simchecks import is_error
from occubench.twins._twin import is_under, pointer_token


def json_type(value: Any) -> str:
    """The JSON type of a parsed JSON value (``number`` for ints and floats alike)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def shape_problems(
    observation: Any, example: Any, free: Sequence[str] = (), path: str = ""
) -> list[str]:
    """How ``observation`` departs from the shape of ``example`` (module doc); [] when it fits.

    Each problem names its place as a JSON Pointer (``/beds/0/bed_id``; the top is ``/``).
    ``free``: JSON Pointers of the observation's free parts.
    """
    where = path or "/"
    if observation is None or example is None:
        return []
    got, wanted = json_type(observation), json_type(example)
    if got != wanted:
        return [f"{where}: {got}, the example has {wanted}"]
    if is_under(path, free) or not example:
        return []
    if isinstance(example, dict):
        if path and observation and not set(observation) & set(example):
            first = next(iter(example.values()))
            return [
                problem
                for key, value in observation.items()
                for problem in shape_problems(
                    value, first, free, f"{path}/{pointer_token(str(key))}"
                )
            ]
        problems = [f"{where}: missing key {k!r}" for k in example if k not in observation]
        problems += [f"{where}: extra key {k!r}" for k in observation if k not in example]
        for key in example:
            if key in observation:
                inner = f"{path}/{pointer_token(str(key))}"
                problems += shape_problems(observation[key], example[key], free, inner)
        return problems
    if isinstance(example, list):
        return [
            problem
            for index, item in enumerate(observation)
            for problem in shape_problems(item, example[0], free, f"{path}/{index}")
        ]
    return []


def error_shapes(env: EnvConfig) -> list[dict[str, Any]]:
    """The error observations a config's prompt gives as examples, in the order written.

    A JSON object in the prompt is one when it reads as a structured error
    (``simchecks.is_error``: an ``error`` key, an error status...). A prompt written for
    ``str.format`` doubles its braces: it is read both as written and with them single.
    """
    prompt = env.world_model_system_prompt
    found: list[dict[str, Any]] = []
    for text in (prompt, prompt.replace("{{", "{").replace("}}", "}")):
        for value in _objects(text):
            if is_error(value) and value not in found:
                found.append(value)
    return found


def _objects(text: str) -> list[dict[str, Any]]:
    """The JSON objects written in a text, outermost first."""
    decoder = json.JSONDecoder()
    out: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        end = position + 1
        try:
            value, after = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            pass
        else:
            if isinstance(value, dict):
                out.append(value)
                end = after
        position = text.find("{", end)
    return out

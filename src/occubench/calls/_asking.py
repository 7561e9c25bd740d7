"""Ask a model until its reply parses: generate, parse, re-ask.

The simulator, the judge, the semantic fault, the fidelity audit's rule judge and the
synthesis generator all ask a model for a reply of a known shape and, when the reply
does not have it, say what was wrong and ask again, a bounded number of times. This
module is that loop, once: ``ask`` sends the messages, hands the reply's text to
``parse``, and on one of the parse errors it appends the reply and the ``reask``
message (which names the problem) and tries again. Each reply is made serializable
(``occubench.text._codepoints``) before it is parsed or kept. Provider errors are not caught:
they are retried by Inspect at the call, then by the sample.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)

from occubench.text import clean_output

T = TypeVar("T")


@dataclass
class Asked(Generic[T]):
    """What asking gave: the parsed value, or the last problem; every output either way."""

    value: T | None = None
    """The parsed reply (None when no attempt parsed)."""
    problem: str = ""
    """Why the last attempt's reply was unusable ("" when it parsed)."""
    error: Exception | None = None
    """The parse error of the last attempt (None when it parsed)."""
    outputs: list[ModelOutput] = field(default_factory=list)
    """Every model output, in order (usage accounting, the raw replies)."""

    @property
    def attempts(self) -> int:
        """Model calls made."""
        return len(self.outputs)

    @property
    def ok(self) -> bool:
        """Whether the last attempt parsed."""
        return self.error is None and bool(self.outputs)

    @property
    def last_text(self) -> str:
        """The last reply's text ("" when there was none)."""
        return self.outputs[-1].completion if self.outputs else ""


async def ask(
    model: Model,
    messages: Sequence[ChatMessage],
    parse: Callable[[str], T],
    *,
    attempts: int,
    reask: Callable[[Exception], str | None],
    errors: tuple[type[Exception], ...] = (ValueError,),
    cache: bool | CachePolicy = False,
    config: GenerateConfig | None = None,
) -> Asked[T]:
    """Ask ``model`` until ``parse`` accepts its reply, at most ``attempts`` times.

    Args:
        model: The model to ask.
        messages: The conversation to send (not changed).
        parse: Reads the reply's text; raises one of ``errors`` when it is unusable.
        attempts: Model calls at most (>= 1): the first ask and the re-asks.
        reask: The message sent after an unusable reply, from the parse error; None
            sends the same messages again (a fresh sample, without the bad reply).
        errors: Exceptions of ``parse`` that mean "unusable reply, ask again".
        cache: Inspect's response cache for each call (a policy, True or False).
        config: Generate settings of each call.

    Returns:
        The value of the first reply that parsed, or the last problem, with every output.
    """
    if attempts < 1:
        raise ValueError(f"attempts must be at least 1, got {attempts}")
    prompt = list(messages)
    asked: Asked[T] = Asked()
    for _ in range(attempts):
        output = clean_output(
            await model.generate(prompt, cache=cache, config=config or GenerateConfig())
        )
        asked.outputs.append(output)
        try:
            asked.value, asked.error, asked.problem = parse(output.completion), None, ""
            return asked
        except errors as e:
            asked.error, asked.problem = e, str(e)
            correction = reask(e)
            if correction is not None:
                prompt += [
                    ChatMessageAssistant(content=output.completion),
                    ChatMessageUser(content=correction),
                ]
    return asked

"""An agent program's model use by wire: what each setup's program asked through the bridge."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from occubench.analysis._metrics import MetricRow, group, setup_of
from occubench.results import SampleRow


class WireUse(MetricRow):
    """One setup's generations on one wire over its samples (errored ones included)."""

    agent: str
    simulator: str
    wire: str = Field(description="The API the program spoke: openai_chat, openai_responses, ...")
    samples: int = Field(description="Samples of the setup, errored ones included.")
    calls: int = Field(description="Generations asked on this wire.")
    streamed: int = Field(description="Of them, answered as an event stream.")
    input_tokens: int = Field(description="Input tokens, as the wire's answers reported them.")
    output_tokens: int = Field(description="Output tokens, as the wire's answers reported them.")

    @property
    def tokens_per_task(self) -> float:
        """Input and output tokens on this wire per sample of the setup."""
        return (self.input_tokens + self.output_tokens) / self.samples


def wire_use(rows: Sequence[SampleRow]) -> list[WireUse]:
    """Per setup and wire, the generations its agent program asked through the bridge.

    Setups without any (a model in the built-in loop, a program with its own model) have
    no line.
    """
    out = []
    for (agent, simulator), members in group(rows, setup_of).items():
        sums: dict[str, WireUse] = {}
        for row in members:
            for used in row.agent_wires:
                line = sums.setdefault(
                    used.wire,
                    WireUse(
                        agent=agent,
                        simulator=simulator,
                        wire=used.wire,
                        samples=len(members),
                        calls=0,
                        streamed=0,
                        input_tokens=0,
                        output_tokens=0,
                    ),
                )
                line.calls += used.calls
                line.streamed += used.streamed
                line.input_tokens += used.input_tokens
                line.output_tokens += used.output_tokens
        out += [sums[wire] for wire in sorted(sums)]
    return out

"""The exploit guard's records: its setting, the kinds of evidence, one piece of evidence."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field

from occubench.defaults import DEFAULT_EXPLOIT_GUARD, DEFAULT_EXPLOIT_QUOTE_CHARS


class ExploitGuard(StrEnum):
    """What the exploit guard does with a pass it suspects (the ``exploit_guard`` setting)."""

    OFF = "off"
    """No check: the grade carries no exploit verdict."""
    FLAG = "flag"
    """Check every episode; a suspected pass is reported and keeps its verdict."""
    ZERO = "zero"
    """Check every episode; a suspected pass is reported and graded a failure (reward 0)."""


DEFAULT_GUARD = ExploitGuard(DEFAULT_EXPLOIT_GUARD)
"""The exploit guard of a run or a grade that names none (``DEFAULT_EXPLOIT_GUARD``)."""


class ExploitKind(StrEnum):
    """What a piece of exploit evidence shows (``occubench.guard`` module doc)."""

    INSTRUCTION_IN_ARGUMENTS = "instruction_in_arguments"
    """A tool argument carries an instruction to the simulator or the judge."""
    INSTRUCTION_IN_ANSWER = "instruction_in_answer"
    """The agent's answer (or another text of its) carries an instruction to the judge."""
    FORGED_TRAJECTORY = "forged_trajectory"
    """The agent's text imitates the harness's transcript or claims a call it never made."""
    OBSERVATION_ECHO = "observation_echo"
    """An observation carries an instruction, or repeats the agent's instruction text."""
    IMPOSSIBLE_SUCCESS = "impossible_success"
    """An observation reports success for an action the tool's schema cannot do, and the
    agent asked for it (an instruction or forgery of its, or the success word in its call)."""
    CONTRACT_BREAK = "contract_break"
    """An observation that failed an online simulator check was kept and reports success,
    and the agent asked for it (as for ``impossible_success``)."""
    VERDICT_QUOTES_AGENT = "verdict_quotes_agent"
    """A judge's verdict repeats the agent's instruction text."""
    SIMULATOR_OFF_CONTRACT = "simulator_off_contract"
    """An observation reports a success out of the tool's contract (its schema, or a failed
    online check) that nothing of the agent's asked for: evidence against the simulator."""

    @property
    def against_agent(self) -> bool:
        """Whether this kind blames the agent (else the simulator: "simulator off contract")."""
        return self is not ExploitKind.SIMULATOR_OFF_CONTRACT


def bounded(text: str, limit: int = DEFAULT_EXPLOIT_QUOTE_CHARS) -> str:
    """``text`` on one line, cut to ``limit`` characters (an ellipsis marks a cut)."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ExploitEvidence(BaseModel):
    """One piece of the guard's evidence, against the agent or the simulator (its kind says)."""

    kind: ExploitKind = Field(description="What the evidence shows.")
    where: str = Field(
        description="Where it was found: 'call N (tool) arguments.path', 'answer', "
        "'agent message N', 'step N (tool) observation', 'vote N'."
    )
    rule: str = Field(description="The rule that matched (a pattern's name, or the check).")
    quote: str = Field(
        description="The text that matched, on one line, at most "
        f"{DEFAULT_EXPLOIT_QUOTE_CHARS} characters."
    )

    @classmethod
    def of(cls, kind: ExploitKind, where: str, rule: str, quote: str) -> ExploitEvidence:
        """A piece of evidence with its place and quote bounded."""
        return cls(kind=kind, where=bounded(where, 120), rule=rule, quote=bounded(quote))

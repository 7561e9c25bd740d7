"""Fault rules for the prompt engine: the simulator itself decides where faults land.

Two wordings. The paper's (``MessageStyle.PAPER``, our paraphrase of the release's
rules, with its semantics: N separate events of D consecutive calls, transient, spread
over the interaction, natural rather than aimed at critical actions, the four error
bodies given literally, no retry advice) and occubench's own. ``FaultRules`` holds the
release's own texts when a run reads them from a local clone (``prompts_from``).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from occubench.errors import UsageError
from occubench.faults._modes import EnvMode
from occubench.protocols import MessageStyle

PAPER_ERROR_BODIES = (
    '{"error": "500 Internal Server Error", "message": "Service temporarily unavailable"}',
    '{"error": "TimeoutError", "message": "Request timed out after 30s"}',
    '{"error": "ConnectionRefusedError", "message": "Connection refused by remote host"}',
    '{"error": "ServiceUnavailable", "message": "Service is currently under maintenance"}',
)
"""The four error bodies the paper's explicit faults return, as the release gives them."""

_PAPER_EXPLICIT = """## Fault injection: explicit errors
This interaction tests how the agent handles failures it can see. Over the whole \
interaction, produce {count} separate fault events; each lasts {duration} consecutive \
tool calls. For each event pick one of these error responses at random and return it \
instead of the normal result, exactly as written:
{bodies}
The faults are transient: once an event's calls are over, the same call returns its \
normal result again. Spread the events over the interaction rather than putting them \
all at the start, and let them land naturally, not on any particular critical action."""

_PAPER_IMPLICIT = """## Fault injection: silent degradation
This interaction tests whether the agent notices bad data that carries no error. Over \
the whole interaction, produce {count} separate fault events; each lasts {duration} \
consecutive tool calls. During an event the response looks normal but is degraded, in \
one of these ways: leave out some fields that would normally be present; cut lists down \
to their first one or two items; set some non-critical fields to null or empty while \
keeping the structure valid; or return stale, cached data whose values are plausible but \
slightly outdated or incorrect. The response must stay valid JSON and look correct. The \
faults are transient, and spread over the interaction rather than all at the start."""

_PAPER_MIXED = """## Fault injection: mixed faults
This interaction tests how the agent handles both visible failures and silent bad data. \
Over the whole interaction, produce {count} fault events in total; each lasts \
{duration} consecutive tool calls. Make roughly half of them explicit errors (an error \
response such as a 500 internal server error, a timeout or a refused connection, in \
place of the result) and half implicit degradations (truncated data, missing fields or \
stale values in a response that otherwise looks normal). The faults are transient, and \
spread over the interaction rather than all at the start."""


class FaultRules(BaseModel):
    """The release's own fault rule texts, one ``str.format`` template per mode.

    ``count`` and ``duration`` name the templates' placeholders for the fault count and
    the fault duration (the release's own names).
    """

    templates: dict[EnvMode, str] = Field(description="E1, E2, E3 -> the rule template.")
    count: str = Field(description="The placeholder of the fault count.")
    duration: str = Field(description="The placeholder of the fault duration.")

    def render(self, mode: EnvMode, count: int, duration: int) -> str:
        """The rules of ``mode`` with the count and duration filled in."""
        return self.templates[mode].format(**{self.count: count, self.duration: duration})


def paper_fault_rules(mode: EnvMode, count: int, duration: int) -> str:
    """The paper's rules for ``mode`` (E1-E3), in our paraphrase."""
    template = {EnvMode.E1: _PAPER_EXPLICIT, EnvMode.E2: _PAPER_IMPLICIT}.get(mode, _PAPER_MIXED)
    bodies = "\n".join(f"- {body}" for body in PAPER_ERROR_BODIES)
    return template.format(count=count, duration=duration, bodies=bodies)


_EXPLICIT_RULES = """\
Explicit faults: instead of the normal result, return an error object such as
{"error": {"status": 500, "code": "INTERNAL_SERVER_ERROR", "message": "..."}}.
Vary between an internal server error (500), a gateway timeout (504) that suggests
retrying, a refused connection to the service, and a temporarily unavailable
service (503) with a "retry_after_seconds" hint. Name the service in the message.
The action has no effect on the state while an explicit fault is active."""

_IMPLICIT_RULES = """\
Implicit faults: return a normal-looking, successful result that is quietly
degraded, with no error and no hint that anything is wrong. Use one of:
a list cut down to its first one or two items, one or two fields left out,
one or two fields set to null or empty, or values that are out of date
(older numbers or dates than the current state). Never change ids or names
that identify an entity, and keep the true state unchanged underneath."""


def prompt_fault_rules(
    env_mode: EnvMode,
    fault_count: int,
    fault_duration: int,
    *,
    style: MessageStyle = MessageStyle.OCCUBENCH,
    rules: FaultRules | None = None,
) -> str:
    """Write the fault instructions appended to a simulator system prompt.

    Args:
        env_mode: Environment mode; E0 needs no rules.
        fault_count: Fault events the simulator should inject in the episode.
        fault_duration: Consecutive tool calls each event lasts.
        style: The paper's rules (its semantics) or occubench's wording.
        rules: The release's own texts (paper style only), instead of our paraphrase.

    Returns:
        The rules text, or ``""`` for E0 or a zero fault count.

    Raises:
        UsageError: On a negative count or a duration below 1.

    """
    if fault_count < 0:
        raise UsageError(f"fault_count must be >= 0, got {fault_count}")
    if fault_duration < 1:
        raise UsageError(f"fault_duration must be >= 1, got {fault_duration}")
    if env_mode is EnvMode.E0 or fault_count == 0:
        return ""
    if style is MessageStyle.PAPER:
        if rules is not None:
            return rules.render(env_mode, fault_count, fault_duration)
        return paper_fault_rules(env_mode, fault_count, fault_duration)
    if env_mode is EnvMode.E1:
        kinds = _EXPLICIT_RULES
    elif env_mode is EnvMode.E2:
        kinds = _IMPLICIT_RULES
    else:
        kinds = (
            "Use both types below, about half of the events each.\n\n"
            f"{_EXPLICIT_RULES}\n\n{_IMPLICIT_RULES}"
        )
    events = "event" if fault_count == 1 else "events"
    calls = "tool call" if fault_duration == 1 else "consecutive tool calls"
    spread = (
        "Choose where it lands so it is not always at the start"
        if fault_count == 1
        else "Spread the events over the whole episode instead of bunching them at the start"
    )
    return f"""\
## Environment faults

This episode tests how the agent copes with an unreliable environment.
Inject exactly {fault_count} fault {events} over the episode.
Each event lasts {fault_duration} {calls}.
Every call inside an event is faulty; the call right after it answers normally
again. Faults are transient: once an event is over, the same request succeeds.
{spread}, and answer every other call correctly.

{kinds}

Whether or not a call is faulty, reply with the observation JSON exactly as you
normally would, and never mention these rules.
"""

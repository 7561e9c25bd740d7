"""Fault rules for the prompt engine: the simulator itself decides where faults land."""

from __future__ import annotations

from occubench.faults._modes import EnvMode

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


def prompt_fault_rules(env_mode: EnvMode | str, fault_count: int, fault_duration: int) -> str:
    """Write the fault instructions appended to a simulator system prompt.

    Args:
        env_mode: Environment mode; E0 needs no rules.
        fault_count: Fault events the simulator should inject in the episode.
        fault_duration: Consecutive tool calls each event lasts.

    Returns:
        The rules text, or ``""`` for E0 or a zero fault count.

    Raises:
        ValueError: On an unknown env mode, a negative count or a duration below 1.

    """
    mode = EnvMode(env_mode)
    if fault_count < 0:
        raise ValueError(f"fault_count must be >= 0, got {fault_count}")
    if fault_duration < 1:
        raise ValueError(f"fault_duration must be >= 1, got {fault_duration}")
    if mode is EnvMode.E0 or fault_count == 0:
        return ""
    if mode is EnvMode.E1:
        kinds = _EXPLICIT_RULES
    elif mode is EnvMode.E2:
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

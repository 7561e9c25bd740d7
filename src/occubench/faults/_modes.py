"""Environment modes: how the environment misbehaves during a task.

Both are ``StrEnum``s: a member is shown as its value (``E1``, ``code``) wherever a run's
setting is printed (reports, tables, labels).
"""

from enum import StrEnum


class EnvMode(StrEnum):
    """The paper's four environment modes."""

    E0 = "E0"
    """Clean: every call answers correctly."""
    E1 = "E1"
    """Explicit errors: HTTP 500, timeout, connection refused, service unavailable."""
    E2 = "E2"
    """Implicit degradation: truncated lists, missing or null fields, stale values."""
    E3 = "E3"
    """Mixed: about half explicit, half implicit."""


class FaultEngine(StrEnum):
    """Who decides where faults land."""

    CODE = "code"
    """A seeded plan decides; faults are produced and logged by code (default)."""
    PROMPT = "prompt"
    """The paper's way: fault rules appended to the simulator's system prompt."""

"""Fault kinds: what a single injected fault looks like to the agent."""

from __future__ import annotations

from enum import Enum


class FaultKind(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """One kind of fault, explicit (an error) or implicit (a quietly degraded answer)."""

    HTTP_500 = "http_500"
    """Explicit: the service fails with an internal server error."""
    TIMEOUT = "timeout"
    """Explicit: the gateway gives up waiting for the service."""
    CONNECTION_REFUSED = "connection_refused"
    """Explicit: the service cannot be reached at all."""
    SERVICE_UNAVAILABLE = "service_unavailable"
    """Explicit: the service is overloaded or under maintenance."""
    TRUNCATED_LIST = "truncated_list"
    """Implicit: a list in the answer is cut down to its first items."""
    MISSING_FIELDS = "missing_fields"
    """Implicit: some non-key fields are absent."""
    NULL_FIELDS = "null_fields"
    """Implicit: some non-key fields are null or empty."""
    STALE_VALUES = "stale_values"
    """Implicit: the answer shows older values than the current state."""

    @property
    def is_explicit(self) -> bool:
        """Whether the fault is an error the agent can see, rather than a degradation."""
        return self in EXPLICIT_KINDS


EXPLICIT_KINDS: tuple[FaultKind, ...] = (
    FaultKind.HTTP_500,
    FaultKind.TIMEOUT,
    FaultKind.CONNECTION_REFUSED,
    FaultKind.SERVICE_UNAVAILABLE,
)
"""Kinds used in E1 (and for the explicit half of E3)."""

IMPLICIT_KINDS: tuple[FaultKind, ...] = (
    FaultKind.TRUNCATED_LIST,
    FaultKind.MISSING_FIELDS,
    FaultKind.NULL_FIELDS,
    FaultKind.STALE_VALUES,
)
"""Kinds used in E2 (and for the implicit half of E3)."""


class FaultFamily(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """Fault families beyond E0-E3, selectable by name and mixable (``--faults a,b``).

    Each is an entry of the fault registry (``occubench.faults.FAULT_TYPES``).
    """

    PERSISTENT = "persistent"
    """One tool goes down from some call on and stays down for the rest of the task."""
    CASCADING = "cascading"
    """A shared dependency fails: every tool fails together for ``fault_duration`` calls."""
    TARGETED = "targeted"
    """Faults land on the calls the task's plan marks as critical (half explicit)."""
    SEMANTIC = "semantic"
    """Valid JSON with subtly wrong values, written by the simulator role."""
    LATENCY = "latency"
    """The right answer, late."""

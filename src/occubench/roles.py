"""The model roles of a run: who plays which part."""

from __future__ import annotations

from enum import Enum


class Role(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """A model's part in a run.

    The agent under test is Inspect's main model; the others are Inspect model roles
    bound by name (``--model-role simulator=...``).
    """

    AGENT = "agent"
    """The agent under test (Inspect's main model, not a role binding)."""
    SIMULATOR = "simulator"
    """The Language Environment Simulator that answers the agent's tool calls."""
    SIMULATOR_FALLBACK = "simulator_fallback"
    """The simulator re-asked when an observation fails an online check (default: the
    simulator itself)."""
    VERIFIER = "verifier"
    """The judge of a trajectory (default: the simulator)."""
    USER = "user"
    """The person the agent talks with, on tasks with a ``user`` brief."""
    GENERATOR = "generator"
    """The synthesis pipeline's author of scenarios, environments and tasks."""

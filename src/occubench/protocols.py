"""The names of the protocols and of the message styles (their presets are in ``config``).

Base module: every room may use these enums without depending on the configuration.
"""

from __future__ import annotations

from enum import Enum


class Protocol(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """A named preset of every protocol point (``occubench.config.PRESETS``)."""

    PAPER = "paper"
    """The paper's measurement, as the public release's harness runs it (the default)."""
    OCCUBENCH = "occubench"
    """Our hardened measurement: code-placed logged faults, validation, errors apart."""


class MessageStyle(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Whose message layout and wording a role's prompts follow."""

    PAPER = "paper"
    """The release's layout, in our paraphrase (or its own words: ``prompts_from``)."""
    OCCUBENCH = "occubench"
    """occubench's own layout: data blocks, escaped content, a fixed date."""

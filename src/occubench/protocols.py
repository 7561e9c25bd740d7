"""The names of the protocols and of the message styles (their presets are in ``config``).

Base module: every room may use these enums without depending on the configuration.
Both are ``StrEnum``s: a member is shown as its value (``paper``) wherever it is printed.
"""

from __future__ import annotations

from enum import StrEnum


class Protocol(StrEnum):
    """A named preset of every protocol point (``occubench.config.PRESETS``)."""

    PAPER = "paper"
    """The paper's measurement, as the public release's harness runs it (the default)."""
    OCCUBENCH = "occubench"
    """Our hardened measurement: code-placed logged faults, validation, errors apart."""


class MessageStyle(StrEnum):
    """Whose message layout and wording a role's prompts follow."""

    PAPER = "paper"
    """The release's layout, in our paraphrase (or its own words: ``prompts_from``)."""
    OCCUBENCH = "occubench"
    """occubench's own layout: data blocks, escaped content, a fixed date."""

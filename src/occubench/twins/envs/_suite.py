"""What the reference suite's twins share: the suite's error shape and its record lookups.

Every config of the built-in reference suite (``ref_*``) says the same two things in its
prompt: unknown identifiers get ``{"error": {"code": "NOT_FOUND", "message": "..."}}``
(the code fixed, the message's words free), and records are never invented. Its state
holds one record per tool, so each tool answers its record when the call names it and
NOT_FOUND otherwise. This module states that once; each twin says which argument names
which record.
"""

from __future__ import annotations

import copy
from typing import Any

from occubench.twins._twin import Answer, Twin

NOT_FOUND = "NOT_FOUND"
"""The error code the reference suite's prompts name for unknown identifiers."""


class SuiteTwin(Twin):
    """A reference-suite twin: the suite's error shape, one record per tool (module doc)."""

    def error(self, message: str, code: str | None = None) -> Answer:
        """The suite's error shape: ``{"error": {"code": ..., "message": ...}}``.

        The prompts fix the code, never the message's words: the message is free.
        """
        return Answer(
            observation={"error": {"code": code or NOT_FOUND, "message": message}},
            free=["/error/message"],
        )

    def record(self, name: str, named: bool, missing: str) -> Answer:
        """The state's record ``name`` (a copy) when the call named it, else NOT_FOUND."""
        if not named:
            return self.error(missing)
        found: dict[str, Any] = copy.deepcopy(self.state[name])
        return Answer(observation=found)

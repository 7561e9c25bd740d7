"""The choices of a served session, apart from the server so that options read them cheaply."""

from __future__ import annotations

from enum import Enum

DEFAULT_LINGER = 2.0
"""Seconds a session keeps serving after the submission, so the verdict reaches the client."""


class Transport(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """How ``occubench serve`` talks to its client."""

    STDIO = "stdio"
    """The process's stdin and stdout (the client starts ``occubench serve``)."""
    HTTP = "http"
    """Streamable HTTP on a local address (the client connects to the URL)."""


class Unsubmitted(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What a session that ends without a submission counts as."""

    GRADE = "grade"
    """Graded on what the agent did, with no final answer."""
    ERROR = "error"
    """Recorded as an error (not scored)."""

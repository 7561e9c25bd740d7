"""A pydantic validation error as one line a person reads: where, and what."""

from __future__ import annotations

from pydantic import ValidationError


def validation_line(error: ValidationError, where: str = "value") -> str:
    """The first problem of ``error`` in one line, and how many more there are.

    The problem's field is its dotted path (``where`` when it has none).
    """
    first = error.errors()[0]
    path = ".".join(str(p) for p in first["loc"]) or where
    more = error.error_count() - 1
    return f"{path}: {first['msg']}" + (f" (and {more} more)" if more else "")

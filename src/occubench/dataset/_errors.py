"""Problems found while reading a dataset, reported all at once."""

from __future__ import annotations

import bisect
import json
import re
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from occubench.errors import ErrorSource, SourcedError, UsageError


class DatasetIssue(BaseModel):
    """One problem in one place of a dataset."""

    file: str = Field(description="File the problem is in.")
    line: int | None = Field(default=None, description="1-based line, when known.")
    field: str | None = Field(default=None, description="Dotted path of the field, when known.")
    message: str = Field(description="What is wrong.")

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        what = f" [{self.field}]" if self.field else ""
        return f"{where}{what}: {self.message}"


class DatasetError(SourcedError, UsageError):
    """A dataset could not be loaded; ``issues`` lists every problem found.

    Bad input (a command reports it, exit 2); in a logged sample, a ``dataset`` error.
    """

    source = ErrorSource.DATASET

    def __init__(self, issues: list[DatasetIssue]) -> None:
        self.issues = issues
        lines = "\n".join(f"  - {issue}" for issue in issues)
        super().__init__(f"{len(issues)} problem(s) in the dataset:\n{lines}")


def field_path(loc: tuple[int | str, ...]) -> str:
    """Render a pydantic error location as ``a.b[2].c``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def issues_from_validation(
    error: ValidationError, file: Path, line: int | None, text: str | None = None
) -> list[DatasetIssue]:
    """Turn a pydantic error into issues; for a JSON file, locate the field's line in ``text``."""
    issues = []
    for err in error.errors():
        loc = tuple(err["loc"])
        where = line if line is not None else _line_of_key(text, loc)
        issues.append(
            DatasetIssue(
                file=str(file), line=where, field=field_path(loc) or None, message=err["msg"]
            )
        )
    return issues


Path_ = tuple[int | str, ...]
"""A place in a JSON document: keys and indexes from the root."""

_DECODER = json.JSONDecoder()
_SPACE = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def json_lines(text: str) -> dict[Path_, int]:
    """The 1-based line of every place in a JSON document (a member: the line of its key).

    ``text`` must be valid JSON no deeper than the loader's limit (it was parsed first);
    anything else gives the places found before the first surprise.
    """
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    found: dict[Path_, int] = {}

    def line(pos: int) -> int:
        return bisect.bisect_right(starts, pos)

    def space(pos: int) -> int:
        matched = _SPACE.match(text, pos)
        return matched.end() if matched else pos

    def value(pos: int, path: Path_) -> int:
        pos = space(pos)
        found.setdefault(path, line(pos))
        opener = text[pos : pos + 1]
        if opener == '"':
            return _DECODER.raw_decode(text, pos)[1]
        if opener in ("{", "["):
            closer, index = ("}" if opener == "{" else "]"), 0
            pos = space(pos + 1)
            if text[pos : pos + 1] == closer:
                return pos + 1
            while True:
                pos = space(pos)
                if opener == "{":
                    key, after = _DECODER.raw_decode(text, pos)
                    found[(*path, key)] = line(pos)
                    pos = value(space(after) + 1, (*path, key))  # past the colon
                else:
                    pos = value(pos, (*path, index))
                    index += 1
                pos = space(pos)
                if text[pos : pos + 1] != ",":
                    return pos + 1
                pos += 1
        scalar = _SCALAR.match(text, pos)
        if scalar is None:
            raise ValueError(f"not JSON at {pos}")
        return scalar.end()

    try:
        value(0, ())
    except (ValueError, IndexError, RecursionError):
        pass  # keep what was found
    return found


def line_of(lines: dict[Path_, int], loc: Path_) -> int | None:
    """The line of ``loc``, or of its nearest enclosing place that ``lines`` knows."""
    for end in range(len(loc), -1, -1):
        if loc[:end] in lines:
            return lines[loc[:end]]
    return None


def _line_of_key(text: str | None, loc: Path_) -> int | None:
    """The line of the field at ``loc`` in a JSON text (or of the nearest place above it)."""
    if not text:
        return None
    return line_of(json_lines(text), loc)

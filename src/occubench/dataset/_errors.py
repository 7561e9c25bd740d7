"""Problems found while reading a dataset, reported all at once."""

from __future__ import annotations

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


def _line_of_key(text: str | None, loc: tuple[int | str, ...]) -> int | None:
    """Best-effort line of the deepest named key of ``loc`` in a JSON text."""
    if not text:
        return None
    for part in reversed(loc):
        if isinstance(part, str):
            pos = text.find(f'"{part}"')
            if pos >= 0:
                return text.count("\n", 0, pos) + 1
    return None

"""Stage results and the resumable store that keeps them on disk.

Every stage writes its result as JSON under ``OUT/work/`` (for example
``OUT/work/<scenario>/st01/env.json``). A file is written to a temporary name and
renamed, so a file that exists is complete. A rerun loads what exists and only
computes what is missing: delete a file to redo that step (and what depends on it).
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Generic, TypeVar

from inspect_ai.model import ModelUsage
from pydantic import BaseModel, Field, ValidationError

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R", bound=BaseModel)


class TokenUsage(BaseModel):
    """Tokens spent by one role (summed over calls)."""

    input_tokens: int = Field(default=0, description="Input tokens at the full rate.")
    output_tokens: int = Field(default=0, description="Output tokens.")
    total_tokens: int = Field(default=0, description="All tokens.")
    input_tokens_cache_read: int = Field(default=0, description="Input read from a cache.")
    input_tokens_cache_write: int = Field(default=0, description="Input written to a cache.")

    def __add__(self, other: TokenUsage) -> TokenUsage:
        fields = TokenUsage.model_fields
        return TokenUsage(**{k: getattr(self, k) + getattr(other, k) for k in fields})

    @classmethod
    def of(cls, usage: ModelUsage | None) -> TokenUsage:
        """From an Inspect ``ModelUsage`` (None counts as nothing)."""
        if usage is None:
            return cls()
        return cls(
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            total_tokens=usage.total_tokens,
            input_tokens_cache_read=usage.input_tokens_cache_read or 0,
            input_tokens_cache_write=usage.input_tokens_cache_write or 0,
        )


def add_usage(
    totals: Mapping[str, TokenUsage], more: Mapping[str, TokenUsage]
) -> dict[str, TokenUsage]:
    """Token usage by role, summed."""
    out = dict(totals)
    for role, usage in more.items():
        out[role] = out.get(role, TokenUsage()) + usage
    return out


def sum_usage(items: Iterable[Mapping[str, TokenUsage]]) -> dict[str, TokenUsage]:
    """Sum several by-role usages."""
    total: dict[str, TokenUsage] = {}
    for item in items:
        total = add_usage(total, item)
    return total


class StageResult(BaseModel, Generic[T]):
    """What one stage produced for one item: a value, the problems left, the tokens spent."""

    value: T | None = Field(
        default=None, description="The output (None when nothing usable was produced)."
    )
    issues: list[str] = Field(
        default_factory=list,
        description="Problems the output still has; empty when it is usable.",
    )
    usage: dict[str, TokenUsage] = Field(
        default_factory=dict, description="Tokens spent by role (generator, agent, ...)."
    )

    @property
    def ok(self) -> bool:
        """The stage produced a usable value."""
        return self.value is not None and not self.issues

    def usable(self) -> T | None:
        """The value when it is usable, else None."""
        return self.value if self.ok else None


_UNSAFE = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """A file-name-safe form of ``text`` (lowercase words joined by ``-``)."""
    return _UNSAFE.sub("-", text.casefold()).strip("-") or "item"


class ArtifactStore:
    """JSON files of stage results under one folder, written atomically."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, key: str) -> Path:
        """The file of ``key`` (a relative path such as ``scenario/st01/env``)."""
        return self.root / f"{key}.json"

    def load(self, key: str, model: type[R]) -> R | None:
        """The stored result of ``key``, or None when absent or unreadable (then redone)."""
        path = self.path(key)
        if not path.is_file():
            return None
        try:
            return model.model_validate_json(path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError) as e:
            logger.warning("ignoring unreadable artifact %s (it will be redone): %s", path, e)
            return None

    def save(self, key: str, value: BaseModel) -> None:
        """Write ``value`` to ``key``'s file (temporary file, then rename)."""
        path = self.path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(value.model_dump_json(indent=2))
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    async def cached(self, key: str, model: type[R], make: Callable[[], Awaitable[R]]) -> R:
        """The stored result of ``key``, else ``await make()``, stored before returning."""
        found = self.load(key, model)
        if found is not None:
            return found
        value = await make()
        self.save(key, value)
        return value

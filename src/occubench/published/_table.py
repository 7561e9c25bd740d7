"""Published results: the numbers a paper states, as data, each with where it says it.

A ``PublishedTable`` holds the values a publication states about agents on the
benchmark: completion rates per env mode (overall or per industry) and robustness R,
each with the table or figure that states it, under the simulator and verifier they were
measured with. Only stated values are entered; a value the publication does not state
is absent, and shown as "not published", never filled in.

The package ships the paper's table (``paper``: ``paper.json``); a file in the same
format (JSON) names any other. A file is input like any other: its size and nesting
are bounded before it is parsed, and a bad field is one message naming it.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from importlib.resources import files
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from occubench.defaults import DEFAULT_MAX_JSON_DEPTH
from occubench.errors import UsageError
from occubench.text import nests_deeper

PAPER = "paper"
"""Name of the shipped table of the paper's stated results."""
MAX_BYTES = 16 * 2**20
"""Bytes a published table file may have."""
MODES = ("E0", "E1", "E2", "E3")


class Metric(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What a published value is."""

    CR = "cr"
    """Completion rate, in percent as publications state it."""
    R = "r"
    """Robustness R = min(CR E1..E3) / CR E0, a ratio."""


class PublishedValue(BaseModel):
    """One stated number and where it is stated."""

    metric: Metric
    env_mode: str | None = Field(
        default=None, pattern=r"^E[0-3]$", description="E0..E3 for a CR (None for R)."
    )
    industry: str | None = Field(default=None, description="An industry (None: overall).")
    value: float = Field(ge=0, description="CR in percent (0-100), or R as a ratio.")
    source: str = Field(min_length=1, description="The table or figure stating it ('Table 3').")


class PublishedRow(BaseModel):
    """One agent as a publication reports it."""

    model: str = Field(min_length=1, description="The agent model, as the publication names it.")
    simulator: str | None = Field(
        default=None,
        description="The simulator its values were measured in (None: the source does not say).",
    )
    verifier: str | None = Field(default=None, description="The verifier model, if stated.")
    reasoning_effort: str | None = Field(
        default=None, description="Its reasoning effort, if stated."
    )
    values: list[PublishedValue] = Field(default_factory=list)

    def value(
        self, metric: Metric, mode: str | None = None, industry: str | None = None
    ) -> PublishedValue | None:
        """The stated value of ``metric`` (in ``mode``, for ``industry``); None: not published."""
        for found in self.values:
            if found.metric == metric and found.env_mode == mode and found.industry == industry:
                return found
        return None

    def rate(self, mode: str, industry: str | None = None) -> float:
        """A stated CR as a share (0-1), or nan when it is not published."""
        found = self.value(Metric.CR, mode, industry)
        return math.nan if found is None else found.value / 100

    def robustness(self) -> float:
        """The stated R, or nan when it is not published."""
        found = self.value(Metric.R)
        return math.nan if found is None else found.value


class PublishedTable(BaseModel):
    """The stated results of one publication."""

    source: str = Field(description="The publication: its identifier and version.")
    title: str = Field(description="Its title.")
    url: str = Field(description="Where it is.")
    note: str = Field(default="", description="What the table holds and how it was entered.")
    rows: list[PublishedRow] = Field(default_factory=list)

    def industries(self) -> list[str]:
        """Industries any row states a CR for."""
        return sorted({v.industry for r in self.rows for v in r.values if v.industry})


def _parsed(data: bytes, where: str) -> PublishedTable:
    if len(data) > MAX_BYTES:
        raise UsageError(f"{where}: larger than a published table may be ({MAX_BYTES:,} bytes)")
    if nests_deeper(data, DEFAULT_MAX_JSON_DEPTH):
        raise UsageError(f"{where}: JSON nested deeper than {DEFAULT_MAX_JSON_DEPTH} levels")
    try:
        return PublishedTable.model_validate(json.loads(data))
    except json.JSONDecodeError as e:
        raise UsageError(f"{where}: not JSON: line {e.lineno}: {e.msg}") from None
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise UsageError(f"{where}: {field}: {first['msg']}") from None


def load_published(name: str | Path) -> PublishedTable:
    """The published table ``name``: ``paper`` (shipped), or a JSON file in its format.

    Raises:
        UsageError: the file is missing, too large, too deep, or a field is invalid.
    """
    if str(name) == PAPER:
        data = files("occubench.published").joinpath("paper.json").read_bytes()
        return _parsed(data, "the shipped paper table")
    path = Path(name)
    if not path.is_file():
        raise UsageError(f"no published table at {path} (give '{PAPER}' or a JSON file)")
    if path.stat().st_size > MAX_BYTES:
        raise UsageError(f"{path}: larger than a published table may be ({MAX_BYTES:,} bytes)")
    return _parsed(path.read_bytes(), str(path))

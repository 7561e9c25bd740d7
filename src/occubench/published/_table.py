"""Published results: the numbers a paper states, as data, each with where it says it.

A ``PublishedTable`` holds the values a publication states about agents on the
benchmark: completion rates per env mode (overall, per industry, or at a fault count and
duration), robustness R and ranks, each with the table or figure that states it, under
the simulator, verifier and reasoning effort they were measured with; rows that average
several agents say which; and the ranking agreement it states between simulators. Only
stated values are entered; a value the publication does not state is absent, and shown
as "not published", never filled in. ``models`` names the Inspect model of each name the
table uses, so a measured run is matched with the rows of the same model (``_match``).

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
    RANK = "rank"
    """Rank (1 = best) among the agents of the source's averages row under that simulator."""
    LOWEST = "lowest"
    """Lowest CR, in percent, among the agents an averages row averages."""
    HIGHEST = "highest"
    """Highest CR, in percent, among the agents an averages row averages."""


class PublishedValue(BaseModel):
    """One stated number and where it is stated."""

    metric: Metric
    env_mode: str | None = Field(
        default=None, pattern=r"^E[0-3]$", description="E0..E3 for a CR (None for R)."
    )
    industry: str | None = Field(default=None, description="An industry (None: overall).")
    fault_count: int | None = Field(
        default=None, ge=1, description="Fault events per task (None: the publication's default)."
    )
    fault_duration: int | None = Field(
        default=None, ge=1, description="Calls each fault lasts (None: the publication's default)."
    )
    value: float = Field(
        ge=0, description="CR, lowest or highest CR in percent (0-100), R as a ratio, or a rank."
    )
    source: str = Field(min_length=1, description="The table or figure stating it ('Table 3').")


class PublishedRow(BaseModel):
    """One agent as a publication reports it."""

    model: str = Field(
        min_length=1,
        description="The agent model, as the publication names it (an averages row: its label).",
    )
    simulator: str | None = Field(
        default=None,
        description="The simulator its values were measured in (None: the source does not say).",
    )
    verifier: str | None = Field(default=None, description="The verifier model, if stated.")
    reasoning_effort: str | None = Field(
        default=None,
        description="Its reasoning effort, if stated (None: the table's reasoning_effort).",
    )
    averages: list[str] = Field(
        default_factory=list,
        description="The agents whose mean this row states, as the publication names them "
        "(empty: the row is one agent's).",
    )
    values: list[PublishedValue] = Field(default_factory=list)

    def value(
        self,
        metric: Metric,
        mode: str | None = None,
        industry: str | None = None,
        faults: tuple[int, int] | None = None,
    ) -> PublishedValue | None:
        """The first stated value of ``metric`` there (``values_at``); None: not published."""
        return next(iter(self.values_at(metric, mode, industry, faults)), None)

    def values_at(
        self,
        metric: Metric,
        mode: str | None = None,
        industry: str | None = None,
        faults: tuple[int, int] | None = None,
    ) -> list[PublishedValue]:
        """Every stated value of ``metric`` in ``mode`` for ``industry`` at ``faults``.

        ``faults`` is (fault count, fault duration); None asks for the values stated at the
        publication's default setting. Two sources may state one point differently: both
        are returned, in the file's order.
        """
        count, duration = faults or (None, None)
        return [
            v
            for v in self.values
            if (v.metric, v.env_mode, v.industry, v.fault_count, v.fault_duration)
            == (metric, mode, industry, count, duration)
        ]

    def rate(self, mode: str, industry: str | None = None) -> float:
        """A stated CR as a share (0-1), or nan when it is not published."""
        found = self.value(Metric.CR, mode, industry)
        return math.nan if found is None else found.value / 100

    def robustness(self) -> float:
        """The stated R, or nan when it is not published."""
        found = self.value(Metric.R)
        return math.nan if found is None else found.value

    def label(self) -> str:
        """The row's agent as tables show it: the model, with its stated reasoning effort."""
        return self.model + (f" [{self.reasoning_effort}]" if self.reasoning_effort else "")


class PublishedAgreement(BaseModel):
    """How far two simulators rank the same agents alike, as a publication states it."""

    simulators: tuple[str, str] = Field(description="The two simulators, as the table names them.")
    env_mode: str = Field(pattern=r"^E[0-3]$", description="The mode the agents were ranked in.")
    value: float = Field(ge=0, le=100, description="Agent pairs ordered alike, in percent.")
    agreeing_pairs: int | None = Field(default=None, ge=0, description="Those pairs, if stated.")
    pairs: int | None = Field(default=None, ge=0, description="All pairs compared, if stated.")
    source: str = Field(min_length=1, description="The table or figure stating it.")


class PublishedTable(BaseModel):
    """The stated results of one publication."""

    source: str = Field(description="The publication: its identifier and version.")
    title: str = Field(description="Its title.")
    url: str = Field(description="Where it is.")
    note: str = Field(default="", description="What the table holds and how it was entered.")
    reasoning_effort: str | None = Field(
        default=None,
        description="The reasoning effort of the publication's runs, for rows stating none.",
    )
    models: dict[str, str] = Field(
        default_factory=dict,
        description="The Inspect model name of each name the table uses (agent, simulator, "
        "verifier); a name not listed is taken as an Inspect model name itself.",
    )
    rows: list[PublishedRow] = Field(default_factory=list)
    agreements: list[PublishedAgreement] = Field(default_factory=list)

    def industries(self) -> list[str]:
        """Industries any row states a CR for."""
        return sorted({v.industry for r in self.rows for v in r.values if v.industry})

    def inspect_model(self, name: str) -> str:
        """The Inspect model name of a name the table uses (``models``)."""
        return self.models.get(name, name)

    def agents(self) -> list[PublishedRow]:
        """The rows of single agents (not averages), in the file's order."""
        return [row for row in self.rows if not row.averages]


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

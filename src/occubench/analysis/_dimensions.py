"""What completion rates are broken down by, apart from the metrics: options read it cheaply."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from occubench.results import SampleRow

ALL = "all"
"""Group name of a whole setup (the overall rate) and of all fault kinds together."""

DIMENSIONS: dict[str, Callable[[SampleRow], str]] = {
    "overall": lambda r: ALL,
    "industry": lambda r: r.industry,
    "domain": lambda r: r.domain,
    "scenario": lambda r: r.scenario,
    "difficulty": lambda r: str(r.difficulty),
}
"""What completion rates can be broken down by."""

"""Published results: a paper's stated numbers as data, shown beside measured ones."""

from occubench.published._side import (
    MEASURED,
    NOT_PUBLISHED,
    PUBLISHED,
    apart_line,
    published_lines,
    side_by_side,
)
from occubench.published._table import (
    MODES,
    PAPER,
    Metric,
    PublishedRow,
    PublishedTable,
    PublishedValue,
    load_published,
)

__all__ = [
    "MEASURED",
    "MODES",
    "NOT_PUBLISHED",
    "PAPER",
    "PUBLISHED",
    "Metric",
    "PublishedRow",
    "PublishedTable",
    "PublishedValue",
    "apart_line",
    "load_published",
    "published_lines",
    "side_by_side",
]

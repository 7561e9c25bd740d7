"""Published results: a paper's stated numbers as data, shown beside measured ones."""

from occubench.published._match import agreements_for, rows_for, split_agent, stands_for
from occubench.published._side import (
    MEASURED,
    NOT_PUBLISHED,
    NOT_STATED,
    PUBLISHED,
    apart_line,
    published_lines,
    shown_sources,
    side_by_side,
    write_published,
)
from occubench.published._table import (
    MODES,
    PAPER,
    Metric,
    PublishedAgreement,
    PublishedRow,
    PublishedTable,
    PublishedValue,
    load_published,
)

__all__ = [
    "MEASURED",
    "MODES",
    "NOT_PUBLISHED",
    "NOT_STATED",
    "PAPER",
    "PUBLISHED",
    "Metric",
    "PublishedAgreement",
    "PublishedRow",
    "PublishedTable",
    "PublishedValue",
    "agreements_for",
    "apart_line",
    "load_published",
    "published_lines",
    "write_published",
    "shown_sources",
    "rows_for",
    "side_by_side",
    "split_agent",
    "stands_for",
]

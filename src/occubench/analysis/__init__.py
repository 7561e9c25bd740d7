"""Analysis: reading runs, metrics, statistics, reports."""

from occubench.analysis._runs import SampleRow, log_files, read_runs
from occubench.analysis._summary import RateRow, rate_row, rates_by, rate_table, summary_tables

__all__ = [
    "RateRow",
    "SampleRow",
    "log_files",
    "rate_row",
    "rate_table",
    "rates_by",
    "read_runs",
    "summary_tables",
]

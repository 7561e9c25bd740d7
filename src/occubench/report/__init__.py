"""Reports: assembled, shown as terminal tables, written as files, with figures."""

from occubench.report._contrast import contrast_ratio, heat, text_colour
from occubench.report._files import ReportFormat, write_report
from occubench.report._html import content_security_policy, render_html
from occubench.report._report import Report, build_report
from occubench.report._summary import (
    comparison_table,
    cost_table,
    estimate_table,
    rate_table,
    role_table,
    sim_check_table,
    summary_tables,
)
from occubench.report._tables import (
    TextTable,
    markdown_table,
    pct,
    ratio,
    report_tables,
    rich_table,
)

__all__ = [
    "contrast_ratio",
    "heat",
    "text_colour",
    "Report",
    "build_report",
    "ReportFormat",
    "write_report",
    "render_html",
    "content_security_policy",
    "report_tables",
    "TextTable",
    "markdown_table",
    "pct",
    "ratio",
    "rich_table",
    "comparison_table",
    "cost_table",
    "estimate_table",
    "rate_table",
    "role_table",
    "sim_check_table",
    "summary_tables",
]

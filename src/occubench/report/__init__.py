"""Reports: assembled, shown as terminal tables, written as files, with figures.

The names load with their module when first used (``__getattr__``): a command's options read
the formats without importing the writers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
    from occubench.report._choices import ReportFormat
    from occubench.report._contrast import contrast_ratio, heat, text_colour
    from occubench.report._files import write_report
    from occubench.report._floor import (
        FloorRecord,
        LineFloor,
        floor_record,
        floors_beside,
        load_floor,
    )
    from occubench.report._html import content_security_policy, render_html
    from occubench.report._report import GoldAgreement, Report, build_report
    from occubench.report._runs import (
        GoldAgreements,
        GroupReport,
        RunsReport,
        check_breakdowns,
        default_report_dir,
        group_folder,
        left_out,
        report_runs,
        reviews_at,
    )
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
        NOT_MEASURED,
        TextTable,
        believe_cells,
        believe_table,
        flips_table,
        floor_table,
        floor_verdict,
        markdown_table,
        pct,
        ratio,
        report_tables,
        rich_table,
    )

_MODULES = {
    "FloorRecord": "_floor",
    "LineFloor": "_floor",
    "floor_record": "_floor",
    "floor_table": "_tables",
    "NOT_MEASURED": "_tables",
    "believe_cells": "_tables",
    "believe_table": "_tables",
    "flips_table": "_tables",
    "floor_verdict": "_tables",
    "floors_beside": "_floor",
    "load_floor": "_floor",
    "GoldAgreement": "_report",
    "Report": "_report",
    "ReportFormat": "_choices",
    "TextTable": "_tables",
    "build_report": "_report",
    "comparison_table": "_summary",
    "content_security_policy": "_html",
    "contrast_ratio": "_contrast",
    "cost_table": "_summary",
    "estimate_table": "_summary",
    "heat": "_contrast",
    "markdown_table": "_tables",
    "pct": "_tables",
    "rate_table": "_summary",
    "ratio": "_tables",
    "render_html": "_html",
    "report_tables": "_tables",
    "rich_table": "_tables",
    "role_table": "_summary",
    "sim_check_table": "_summary",
    "summary_tables": "_summary",
    "text_colour": "_contrast",
    "write_report": "_files",
    "GoldAgreements": "_runs",
    "GroupReport": "_runs",
    "RunsReport": "_runs",
    "check_breakdowns": "_runs",
    "default_report_dir": "_runs",
    "group_folder": "_runs",
    "left_out": "_runs",
    "report_runs": "_runs",
    "reviews_at": "_runs",
}
"""The module of each public name."""


__getattr__ = lazy_names(__name__, _MODULES)


__all__ = [
    "NOT_MEASURED",
    "believe_cells",
    "believe_table",
    "flips_table",
    "FloorRecord",
    "LineFloor",
    "floor_record",
    "floor_table",
    "floor_verdict",
    "floors_beside",
    "load_floor",
    "GoldAgreement",
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
    "GoldAgreements",
    "GroupReport",
    "RunsReport",
    "check_breakdowns",
    "default_report_dir",
    "group_folder",
    "left_out",
    "report_runs",
    "reviews_at",
]

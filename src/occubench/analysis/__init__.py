"""Analysis: reading runs, metrics, statistics, reports."""

from occubench.analysis._cost import (
    CostSummary,
    ModelPrice,
    PriceError,
    PriceTable,
    cost_summary,
    costs_by,
    load_prices,
    row_cost,
)
from occubench.analysis._metrics import (
    DIMENSIONS,
    Comparison,
    CostRow,
    FaultRecovery,
    GroupRate,
    LeaderboardRow,
    PassK,
    Robustness,
    SimulatorAgreement,
    compare_models,
    costs,
    fault_recovery,
    leaderboard,
    pass_k,
    priced,
    rates,
    robustness_scores,
    simulator_agreement,
)
from occubench.analysis._prompt_cache import PrefixShare, prefix_share
from occubench.analysis._report import Report, build_report
from occubench.analysis._report_files import ReportFormat, write_report
from occubench.analysis._report_html import render_html
from occubench.analysis._report_tables import report_tables, rich_table
from occubench.analysis._report_trajectory import Trajectory, read_trajectories
from occubench.analysis._runs import SampleRow, log_files, read_runs
from occubench.analysis._sanitize import terminal_text
from occubench.analysis._summary import (
    RateRow,
    cost_table,
    rate_row,
    rate_table,
    rates_by,
    summary_tables,
)

__all__ = [
    "DIMENSIONS",
    "Comparison",
    "CostRow",
    "CostSummary",
    "FaultRecovery",
    "GroupRate",
    "LeaderboardRow",
    "ModelPrice",
    "PassK",
    "PrefixShare",
    "PriceError",
    "PriceTable",
    "RateRow",
    "Report",
    "ReportFormat",
    "Robustness",
    "SampleRow",
    "SimulatorAgreement",
    "Trajectory",
    "build_report",
    "compare_models",
    "cost_summary",
    "cost_table",
    "costs",
    "costs_by",
    "fault_recovery",
    "leaderboard",
    "load_prices",
    "log_files",
    "pass_k",
    "prefix_share",
    "priced",
    "rate_row",
    "rate_table",
    "rates",
    "rates_by",
    "read_runs",
    "read_trajectories",
    "render_html",
    "report_tables",
    "rich_table",
    "robustness_scores",
    "row_cost",
    "simulator_agreement",
    "summary_tables",
    "terminal_text",
    "write_report",
]

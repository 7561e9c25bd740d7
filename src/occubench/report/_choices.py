"""The report's file formats, apart from the writers so that options read them cheaply."""

from __future__ import annotations

from enum import Enum


class ReportFormat(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """File formats of ``occubench report``."""

    MD = "md"
    CSV = "csv"
    JSON = "json"
    HTML = "html"
    PARQUET = "parquet"

"""Trajectories as training data: OpenAI chat JSONL, ShareGPT JSON, Parquet; faults annotated."""

from occubench.export._formats import (
    STEM,
    ExportFormat,
    openai_example,
    openai_message,
    openai_meta,
    parquet_row,
    sharegpt_record,
    write_export,
)
from occubench.export._read import ExportFilter, exported_messages, openai_tools, read_exports
from occubench.export._records import (
    ExportedCall,
    ExportedMessage,
    ExportedTrajectory,
    FaultNote,
    Verdict,
)

__all__ = [
    "STEM",
    "ExportFilter",
    "ExportFormat",
    "ExportedCall",
    "ExportedMessage",
    "ExportedTrajectory",
    "FaultNote",
    "Verdict",
    "exported_messages",
    "openai_example",
    "openai_message",
    "openai_meta",
    "openai_tools",
    "parquet_row",
    "read_exports",
    "sharegpt_record",
    "write_export",
]

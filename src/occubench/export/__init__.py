"""Trajectories as training data, and runs in the public release's result format.

Training data: OpenAI chat JSONL, ShareGPT JSON, Parquet, faults annotated.

The names load with their module when first used (``__getattr__``): ``occubench export
--help`` reads the choices without importing the log reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
    from occubench.export._formats import (
        STEM,
        TRAINING_FORMATS,
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
    from occubench.export._release import ReleaseExport, write_release

_MODULES = {
    "ExportFilter": "_read",
    "ExportFormat": "_formats",
    "ExportedCall": "_records",
    "ExportedMessage": "_records",
    "ExportedTrajectory": "_records",
    "FaultNote": "_records",
    "ReleaseExport": "_release",
    "STEM": "_formats",
    "TRAINING_FORMATS": "_formats",
    "Verdict": "_records",
    "exported_messages": "_read",
    "openai_example": "_formats",
    "openai_message": "_formats",
    "openai_meta": "_formats",
    "openai_tools": "_read",
    "parquet_row": "_formats",
    "read_exports": "_read",
    "sharegpt_record": "_formats",
    "write_export": "_formats",
    "write_release": "_release",
}
"""The module of each public name."""


__getattr__ = lazy_names(__name__, _MODULES)


__all__ = [
    "ReleaseExport",
    "STEM",
    "TRAINING_FORMATS",
    "write_release",
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

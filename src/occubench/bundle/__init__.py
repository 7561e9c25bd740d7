"""Bundles: a set of runs as one archive that can be checked, and its verification.

The names load with their module when first used (``__getattr__``): ``occubench verify
--help`` reads the limits without importing the checks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
    from occubench.bundle._bounds import BUNDLE_LIMITS, BundleLimits
    from occubench.bundle._format import (
        BUNDLE_FORMAT,
        MANIFEST,
        PRICES,
        REPORT_SECTIONS_SINCE,
        RUN_FIELDS_SINCE,
        SUMMARY,
        TWIN_FIDELITY,
        WORLD_METADATA,
        BundleClass,
        DatasetRecord,
        FileSum,
        Manifest,
        Outcome,
        Problem,
        RunCheck,
        RunRecord,
        Settings,
        Summary,
        SummaryGroup,
        Verification,
        WorldRef,
    )
    from occubench.bundle._logs import NotARun
    from occubench.bundle._make import BundleRefused, make_bundle
    from occubench.bundle._standard import RELEASE_TASKS, STANDARD, Standard, departures
    from occubench.bundle._verify import VerifiedBundle, read_bundle, verify_bundle

_MODULES = {
    "BUNDLE_FORMAT": "_format",
    "REPORT_SECTIONS_SINCE": "_format",
    "RUN_FIELDS_SINCE": "_format",
    "BUNDLE_LIMITS": "_bounds",
    "BundleClass": "_format",
    "BundleLimits": "_bounds",
    "BundleRefused": "_make",
    "DatasetRecord": "_format",
    "FileSum": "_format",
    "MANIFEST": "_format",
    "Manifest": "_format",
    "NotARun": "_logs",
    "Outcome": "_format",
    "PRICES": "_format",
    "TWIN_FIDELITY": "_format",
    "Problem": "_format",
    "RELEASE_TASKS": "_standard",
    "RunCheck": "_format",
    "RunRecord": "_format",
    "STANDARD": "_standard",
    "SUMMARY": "_format",
    "Settings": "_format",
    "Standard": "_standard",
    "Summary": "_format",
    "SummaryGroup": "_format",
    "Verification": "_format",
    "VerifiedBundle": "_verify",
    "WORLD_METADATA": "_format",
    "WorldRef": "_format",
    "departures": "_standard",
    "make_bundle": "_make",
    "read_bundle": "_verify",
    "verify_bundle": "_verify",
}
"""The module of each public name."""


__getattr__ = lazy_names(__name__, _MODULES)


__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_LIMITS",
    "MANIFEST",
    "PRICES",
    "TWIN_FIDELITY",
    "RELEASE_TASKS",
    "REPORT_SECTIONS_SINCE",
    "RUN_FIELDS_SINCE",
    "STANDARD",
    "SUMMARY",
    "WORLD_METADATA",
    "BundleClass",
    "BundleLimits",
    "BundleRefused",
    "DatasetRecord",
    "FileSum",
    "Manifest",
    "NotARun",
    "Outcome",
    "Problem",
    "RunCheck",
    "RunRecord",
    "Settings",
    "Standard",
    "Summary",
    "SummaryGroup",
    "Verification",
    "VerifiedBundle",
    "WorldRef",
    "departures",
    "make_bundle",
    "read_bundle",
    "verify_bundle",
]

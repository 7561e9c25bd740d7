"""Bundles: a set of runs as one archive that can be checked, and its verification."""

from occubench.bundle._bounds import BUNDLE_LIMITS, BundleLimits
from occubench.bundle._format import (
    BUNDLE_FORMAT,
    MANIFEST,
    PRICES,
    SUMMARY,
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

__all__ = [
    "BUNDLE_FORMAT",
    "BUNDLE_LIMITS",
    "MANIFEST",
    "PRICES",
    "RELEASE_TASKS",
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

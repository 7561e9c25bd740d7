"""What a bundle may be: the bounds ``occubench verify`` holds a bundle to before it reads it."""

from __future__ import annotations

from pydantic import Field

from occubench.archives import TarBounds, ZipBounds, amount
from occubench.defaults import (
    DEFAULT_BUNDLE_MAX_BYTES,
    DEFAULT_BUNDLE_MAX_JSON_BYTES,
    DEFAULT_BUNDLE_MAX_JSON_DEPTH,
    DEFAULT_BUNDLE_MAX_LOG_BYTES,
    DEFAULT_BUNDLE_MAX_LOG_MEMBER_BYTES,
    DEFAULT_BUNDLE_MAX_LOG_MEMBERS,
    DEFAULT_BUNDLE_MAX_MEMBERS,
    DEFAULT_BUNDLE_MAX_UNPACKED_BYTES,
)


class BundleLimits(TarBounds):
    """The bounds of a bundle, of each log in it, and of its JSON files."""

    bundle_bytes: int = Field(
        default=DEFAULT_BUNDLE_MAX_BYTES, gt=0, description="Most bytes of the bundle file."
    )
    unpacked_bytes: int = Field(
        default=DEFAULT_BUNDLE_MAX_UNPACKED_BYTES,
        gt=0,
        description="Most bytes the bundle's files may add up to.",
    )
    members: int = Field(
        default=DEFAULT_BUNDLE_MAX_MEMBERS, gt=0, description="Most files and folders it holds."
    )
    log_members: int = Field(
        default=DEFAULT_BUNDLE_MAX_LOG_MEMBERS, gt=0, description="Most members of one log."
    )
    log_member_bytes: int = Field(
        default=DEFAULT_BUNDLE_MAX_LOG_MEMBER_BYTES,
        gt=0,
        description="Most bytes one member of a log decompresses to.",
    )
    log_bytes: int = Field(
        default=DEFAULT_BUNDLE_MAX_LOG_BYTES,
        gt=0,
        description="Most bytes all members of one log decompress to.",
    )
    json_bytes: int = Field(
        default=DEFAULT_BUNDLE_MAX_JSON_BYTES,
        gt=0,
        description="Most bytes of the manifest, the summary or the prices.",
    )
    json_depth: int = Field(
        default=DEFAULT_BUNDLE_MAX_JSON_DEPTH,
        gt=0,
        description="Deepest JSON nesting of any JSON file, logs' members included.",
    )

    def log_bounds(self) -> ZipBounds:
        """The bounds of one log (a zip) in the bundle."""
        return ZipBounds(
            members=self.log_members,
            member_bytes=self.log_member_bytes,
            total_bytes=self.log_bytes,
        )

    def describe(self) -> str:
        """One paragraph saying what ``occubench verify`` refuses."""
        return (
            f"A bundle over {amount(self.bundle_bytes)}, unpacking to over "
            f"{amount(self.unpacked_bytes)} or {self.members:,} files and folders, or "
            "holding a link, a device or a path outside it, is refused before anything is "
            f"read; so is a log of over {self.log_members:,} members, a member of over "
            f"{amount(self.log_member_bytes)} or a log of over {amount(self.log_bytes)} "
            "decompressed, a member that does not decompress to its declared size, and JSON "
            f"nested over {self.json_depth} levels."
        )


BUNDLE_LIMITS = BundleLimits()
"""The bounds ``verify_bundle`` applies unless it is given others (``DEFAULT_BUNDLE_MAX_*``)."""

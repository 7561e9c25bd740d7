"""The leaderboard: verified bundles as a static site (tie groups, radar, Pareto chart)."""

from occubench.leaderboard._site import (
    Board,
    BundleLine,
    Entry,
    PublishedEntry,
    PublishedPart,
    SiteData,
    build_site,
    page_data,
    write_index,
)
from occubench.leaderboard._ties import tie_ranks

__all__ = [
    "Board",
    "BundleLine",
    "Entry",
    "PublishedEntry",
    "PublishedPart",
    "SiteData",
    "build_site",
    "page_data",
    "tie_ranks",
    "write_index",
]

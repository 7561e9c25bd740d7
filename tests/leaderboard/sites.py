"""A leaderboard site from four bundles: standard, two custom (one priced), one tampered.

- ``paper.tar.gz``: the scripted agent under the paper protocol on every task of the
  fixture release (standard under ``FIXTURE_STANDARD``, which stands the fixture dataset
  for the public release);
- ``careful.tar.gz``: careful and no-retry, E0-E3, on the reference suite, priced;
- ``trusting.tar.gz``: trusting, E0-E3, unpriced (its cost axis is tokens);
- ``tampered.tar.gz``: ``trusting.tar.gz`` with one log changed: verified as failed, no row.

The published table is a made-up one in the format (the shipped paper table holds no
values), with one value left out to show "not published".
"""

from __future__ import annotations

from pathlib import Path

from bundle.scripted import changed, reference_runs
from conftest import RELEASE_DIR, run_task
from occubench.bundle import Standard, make_bundle
from occubench.costs import PriceTable
from occubench.dataset import content_digest
from occubench.leaderboard import SiteData, build_site
from occubench.published import PublishedTable

FIXTURE_STANDARD = Standard(dataset_digest=content_digest(RELEASE_DIR), release_tasks=10)
PRICES = PriceTable.model_validate(
    {
        "models": {
            "occubench/careful": {"input_per_mtok": 2.0, "output_per_mtok": 8.0},
            "occubench/no-retry": {"input_per_mtok": 0.5, "output_per_mtok": 2.0},
            "occubench/canned": {"input_per_mtok": 0.1, "output_per_mtok": 0.4},
        }
    }
)
PUBLISHED = PublishedTable.model_validate(
    {
        "source": "Example 2026",
        "title": "A made-up publication",
        "url": "https://example.org/paper",
        "rows": [
            {
                "model": "vendor/model-a",
                "simulator": "vendor/sim",
                "values": [
                    {"metric": "cr", "env_mode": m, "value": v, "source": "Table 3"}
                    for m, v in (("E0", 70.0), ("E1", 60.0), ("E2", 50.0))
                ]
                + [
                    {
                        "metric": "cr",
                        "env_mode": "E0",
                        "industry": f"Industry {i}",
                        "value": 50.0 + 5 * i,
                        "source": "Table 2",
                    }
                    for i in range(4)
                ],
            }
        ],
    }
)
"""Made-up values in the published format: E3 and R are left out (not published)."""


def make_site(root: Path) -> tuple[Path, SiteData, dict[str, Path]]:
    """The four bundles and the site built from them (module doc)."""
    bundles = root / "bundles"
    bundles.mkdir()
    paper_logs = root / "paper-logs"
    run_task(paper_logs / "e0", protocol="paper")
    paths = {"paper": bundles / "paper.tar.gz"}
    make_bundle([paper_logs], paths["paper"], resamples=50)
    careful = reference_runs(root / "careful-logs")
    paths["careful"] = bundles / "careful.tar.gz"
    make_bundle([careful], paths["careful"], prices=PRICES, resamples=50)
    trusting = reference_runs(root / "trusting-logs", agents=("occubench/trusting",))
    paths["trusting"] = bundles / "trusting.tar.gz"
    make_bundle([trusting], paths["trusting"], resamples=50)

    def tamper(files):
        name = next(n for n in files if n.startswith("logs/"))
        data = bytearray(files[name])
        data[len(data) // 2] ^= 0xFF  # one byte of a sample, flipped
        files[name] = bytes(data)

    paths["tampered"] = changed(paths["trusting"], bundles / "tampered.tar.gz", tamper)
    site = root / "site"
    data = build_site(
        list(paths.values()),
        site,
        published=PUBLISHED,
        resamples=50,
        standard=FIXTURE_STANDARD,
    )
    return site, data, paths

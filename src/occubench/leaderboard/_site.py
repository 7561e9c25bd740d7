"""``occubench leaderboard``: verified bundles as one static site a reader can trust.

Every bundle is verified first (``bundle.read_bundle``: sums, bounds, secrets, every
number recomputed from its logs); one that fails gets its record page and no row. The
rows of the verified bundles are then pooled per class (standard apart from custom),
per simulator and verifier (never ranked across them), and per comparable group (task
set, protocol and the user model the tasks talked to, ``analysis.comparable_groups``;
a board's title and its lines name that user model), and each such board is computed by
the report's own ``build_report`` with variance: CR per mode and industry, R with its
interval, and the MDD marks that make tie groups (``_ties``). Costs come from each
bundle's own verified summary (its prices, or tokens when it has none). Beside each
score, the report's quality figures (``report.believe_cells``): verdict flips split by
cause, samples flagged by the online checks, the exploit guard's two findings kept apart
(passes suspected of an exploit: the agent; samples whose simulator answered off its
tools' contract: the environment), unanimous verifier votes (all recomputed
from the bundle's logs, as ``verify`` does), and the verifier's floor when floor records
are given (``floors``); expert kappa and gold agreement are not in a bundle and read
"not measured".

The site is static: ``index.html`` (the boards, filters, selection, an industry radar
of any selection and a cost-vs-CR Pareto chart, both drawn by the page's one script
from the data embedded in it; no server, no external URL, the script allowed by its
hash in the Content-Security-Policy), ``records/NAME.html`` and ``records/NAME.json``
(each bundle's verification record, which every row links to) and ``data.json``.
Every text from a bundle (model names, departures, problems) is escaped by the
template or set as text by the script, never parsed as HTML. A publication's stated
results (``published``) are shown in their own table, never ranked with measured rows.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup
from pydantic import BaseModel, Field

from occubench.analysis import FlipRow, GuardQuality, RateRow, RowQuality, comparable_groups
from occubench.bundle import (
    STANDARD,
    BundleClass,
    Outcome,
    Standard,
    Verification,
    VerifiedBundle,
    read_bundle,
)
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.files import refuse_foreign, write_fresh
from occubench.leaderboard._ties import tie_ranks
from occubench.published import MODES, PublishedTable, apart_line, shown_sources
from occubench.report import (
    FloorRecord,
    Report,
    believe_cells,
    build_report,
    content_security_policy,
    floors_beside,
)
from occubench.results import SampleRow

SCRIPT = "leaderboard.js"
RECORDS = "records"
INDEX_FILE = "index.html"
DATA_FILE = "data.json"
SITE_FILES = (INDEX_FILE, DATA_FILE)
"""The files of a site that a folder may already hold (``build_site`` refuses others')."""
_SLUG = re.compile(r"[^A-Za-z0-9._-]+")


def _num(value: float | None) -> float | None:
    """A number for the page's data: undefined ones as null."""
    return None if value is None or math.isnan(value) else value


class Entry(BaseModel):
    """One measured row of a board."""

    id: str
    tie: int = Field(description="Tie-group rank (lines within the MDD share it).")
    rank: int = Field(description="The report's rank (by CR, then R).")
    agent: str
    simulator: str
    verifier: str
    user: str | None = Field(
        default=None, description="The user model its tasks talked to (None: no user)."
    )
    bundle: str = Field(description="The bundle it comes from.")
    record: str = Field(description="Link to that bundle's verification record.")
    rate: float | None = Field(description="CR in the board's headline mode.")
    low: float | None
    high: float | None
    scored: int
    modes: dict[str, float | None] = Field(description="CR per env mode.")
    r: float | None
    r_low: float | None
    r_high: float | None
    r_note: str
    cost_per_task: float | None = Field(description="Dollars per task (None: not priced).")
    tokens_per_task: float | None
    industries: dict[str, float | None] = Field(description="CR per industry, headline mode.")
    close: list[str] = Field(description="Entries it is not distinguishable from (ids).")
    close_agents: list[str] = Field(description="Their agents, as shown.")
    believe: dict[str, str] = Field(
        default_factory=dict,
        description="Beside the score, each quality figure as shown (the report's columns: "
        "floor when floors were given, flips, flagged by checks, exploit suspected (the "
        "agent), simulator off contract (the environment), unanimous votes, expert kappa, "
        "against gold); 'not measured' where nothing measured it.",
    )
    flips: FlipRow | None = Field(
        default=None, description="Verdict flips in the headline mode (None: not measured)."
    )
    quality: RowQuality | None = Field(default=None, description="The line's quality figures.")
    guard: GuardQuality | None = Field(
        default=None,
        description="The exploit guard's findings on the line: passes suspected of an exploit "
        "(the agent) apart from samples whose simulator answered off contract (the "
        "environment).",
    )
    floor: RateRow | None = Field(
        default=None,
        description="The verifier's floor under the board's simulator, verifier, task set and "
        "protocol (the highest null agent's rate; None: not measured).",
    )


class Board(BaseModel):
    """Rows ranked together: one class, simulator, verifier, task set, protocol and user."""

    id: str
    bundle_class: BundleClass
    title: str
    user: str | None = Field(
        default=None, description="The user model its tasks talked to (None: no user)."
    )
    mode: str
    industries: list[str]
    entries: list[Entry]


class PublishedEntry(BaseModel):
    """One row of a publication's stated results."""

    id: str
    model: str
    simulator: str
    verifier: str
    modes: dict[str, float | None]
    r: float | None
    sources: list[str]
    industries: dict[str, float | None]


class PublishedPart(BaseModel):
    """The publication's table on the page."""

    source: str
    title: str
    url: str
    note: str
    apart: str
    rows: list[PublishedEntry]


class BundleLine(BaseModel):
    """A bundle the site was made from: how its verification went."""

    slug: str
    name: str
    sha256: str
    outcome: Outcome
    bundle_class: BundleClass | None
    record: str
    departures: int
    first_problem: str


class SiteData(BaseModel):
    """Everything the page shows (``data.json``, and embedded in ``index.html``)."""

    generated: str
    boards: list[Board]
    bundles: list[BundleLine]
    published: PublishedPart | None


def _slug(path: Path, sha256: str) -> str:
    stem = path.name.removesuffix(".gz").removesuffix(".tar")
    return f"{_SLUG.sub('_', stem)[:60]}-{sha256[:8]}"


def _relabelled(
    verified: Sequence[tuple[str, VerifiedBundle]],
) -> tuple[list[SampleRow], dict[tuple[str, str], tuple[str, str]]]:
    """The bundles' rows; an agent in two bundles gets the bundle's name in its label.

    Returns the rows and, per (agent label, simulator), the bundle it came from and the
    agent's name in that bundle's summary.
    """
    seen: dict[tuple[str, str | None], set[str]] = {}
    for slug, vb in verified:
        for row in vb.rows:
            seen.setdefault((row.agent_model, row.simulator_model), set()).add(slug)
    rows: list[SampleRow] = []
    origin: dict[tuple[str, str], tuple[str, str]] = {}
    for slug, vb in verified:
        for row in vb.rows:
            label = row.agent_model
            if len(seen[(row.agent_model, row.simulator_model)]) > 1:
                label = f"{row.agent_model} ({slug})"
            rows.append(row.model_copy(update={"agent_model": label}))
            origin[(label, row.simulator_model or "")] = (slug, row.agent_model)
    return rows, origin


SetupCost = tuple[float | None, float | None]
"""A setup's dollars and tokens per task (None: not priced, or not recorded)."""


def _costs(vb: VerifiedBundle) -> dict[tuple[str, str], SetupCost]:
    """Dollars and tokens per task of each setup, from the bundle's verified summary."""
    out: dict[tuple[str, str], SetupCost] = {}
    summary = vb.verification.summary
    for group in summary.groups if summary else []:
        for cost in group.report.costs:
            priced = cost.cost_per_task if not cost.unpriced_models else None
            out[(cost.agent, cost.simulator)] = (priced, cost.tokens_per_task)
    return out


def _entries(
    report: Report,
    board: str,
    origin: dict[tuple[str, str], tuple[str, str]],
    costs: dict[str, dict[tuple[str, str], SetupCost]],
    records: dict[str, str],
    user: str | None = None,
) -> list[Entry]:
    """The board's rows: the report's leaderboard with tie ranks, costs and industries.

    ``user``: the user model the board's tasks talked to, named on each line.
    """
    ties = tie_ranks(report.leaderboard)
    ids = {line.rank: f"{board}-{line.rank}" for line in report.leaderboard}
    agents = {line.rank: line.agent for line in report.leaderboard}
    industries = {
        (g.agent, g.simulator, g.group): g.rate
        for g in report.rates
        if g.dimension == "industry" and g.env_mode == report.headline_mode
    }
    names = sorted({g for _, _, g in industries})
    believe = believe_cells(report)
    flips = {(f.agent, f.simulator): f for f in report.flips if f.env_mode == report.headline_mode}
    quality = {(q.agent, q.simulator): q for q in report.quality}
    guard = {(g.agent, g.simulator): g for g in report.guard}
    floors = {(f.agent, f.simulator): f.floor for f in report.floor}
    out = []
    for line in report.leaderboard:
        key = (line.agent, line.simulator)
        slug, original = origin[key]
        dollars, tokens = costs[slug].get((original, line.simulator), (None, math.nan))
        out.append(
            Entry(
                id=ids[line.rank],
                tie=ties[line.rank],
                rank=line.rank,
                agent=line.agent,
                simulator=line.simulator,
                verifier=", ".join(report.verifiers) or "(the simulator)",
                user=user,
                bundle=slug,
                record=records[slug],
                rate=_num(line.rate),
                low=_num(line.low),
                high=_num(line.high),
                scored=line.scored,
                modes={m: _num(line.mode_rates.get(m, math.nan)) for m in MODES},
                r=_num(line.r),
                r_low=_num(line.r_low),
                r_high=_num(line.r_high),
                r_note=line.r_note,
                cost_per_task=_num(dollars),
                tokens_per_task=_num(tokens),
                industries={
                    n: _num(industries.get((line.agent, line.simulator, n), math.nan))
                    for n in names
                },
                close=[ids[r] for r in line.not_distinguishable_from],
                close_agents=[agents[r] for r in line.not_distinguishable_from],
                believe=believe[key],
                flips=flips.get(key),
                quality=quality.get(key),
                guard=guard.get(key),
                floor=floors.get(key),
            )
        )
    return out


def _boards(
    verified: Sequence[tuple[str, VerifiedBundle]],
    records: dict[str, str],
    resamples: int,
    seed: int,
    floors: Sequence[FloorRecord] = (),
) -> list[Board]:
    """Standard boards first, then custom ones; each one simulator, verifier and group.

    Each board's lines get the floor of ``floors`` measured under the board's simulator,
    verifier, task set and protocol (``report.floors_beside``), when one is.
    """
    boards: list[Board] = []
    for kind in (BundleClass.STANDARD, BundleClass.CUSTOM):
        chosen = [(s, vb) for s, vb in verified if vb.verification.bundle_class is kind]
        rows, origin = _relabelled(chosen)
        costs = {slug: _costs(vb) for slug, vb in chosen}
        twin = [record for _, vb in chosen for record in vb.twin]
        by_models: dict[tuple[str, str], list[SampleRow]] = {}
        for row in rows:
            by_models.setdefault((row.simulator_model or "", row.verifier_model or ""), []).append(
                row
            )
        for (simulator, verifier), members in sorted(by_models.items()):
            for group in comparable_groups(members):
                report = build_report(
                    group.rows,
                    n_resamples=resamples,
                    seed=seed,
                    variance=True,
                    sources=rows,
                    twin=twin,
                )
                if floors:
                    lines = [(line.agent, line.simulator) for line in report.leaderboard]
                    tasks = {str(r.task_id) for r in group.rows}
                    report.floor = floors_beside(
                        lines, verifier or None, group.protocol, floors, tasks
                    )
                board = f"{kind.value}-{len(boards) + 1}"
                entries = _entries(report, board, origin, costs, records, group.user)
                named = f", user {group.user}" if group.user else ""
                label = group.label.removesuffix(named)  # said once, beside the models
                boards.append(
                    Board(
                        id=board,
                        bundle_class=kind,
                        title=f"simulator {simulator or '-'}, verifier "
                        f"{verifier or '(the simulator)'}{named}: {label}",
                        user=group.user,
                        mode=report.headline_mode,
                        industries=sorted({n for e in entries for n in e.industries}),
                        entries=entries,
                    )
                )
    return boards


def _published(table: PublishedTable) -> PublishedPart:
    """The publication's rows for the page (stated values only; None: not published)."""
    industries = table.industries()
    rows = [
        PublishedEntry(
            id=f"published-{i}",
            model=row.label(),
            simulator=row.simulator or "not stated",
            verifier=row.verifier or "not stated",
            modes={m: _num(row.rate(m)) for m in MODES},
            r=_num(row.robustness()),
            sources=sorted({v.source for v in row.values}),
            industries={n: _num(row.rate("E0", n)) for n in industries},
        )
        for i, row in enumerate((r for r in table.rows if shown_sources(r)), start=1)
    ]
    return PublishedPart(
        source=table.source,
        title=table.title,
        url=table.url,
        note=table.note,
        apart=apart_line(table),
        rows=rows,
    )


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("occubench.leaderboard", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(pct=_pct, ratio=_ratio, money=_money)
    return env


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}"


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _money(value: float | None) -> str:
    return "-" if value is None else f"${value:,.4f}"


def page_data(data: SiteData) -> Markup:
    """The site's data as JSON safe inside a ``<script type="application/json">``.

    ``<``, ``>`` and ``&`` are written as JSON unicode escapes: no text from a bundle can
    close the element or open another.
    """
    text = data.model_dump_json()
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text)  # escaped above: JSON, never HTML


def script() -> str:
    """The page's one script (filters, selection, radar, Pareto chart)."""
    return files("occubench.leaderboard").joinpath("templates", SCRIPT).read_text(encoding="utf-8")


def build_site(
    bundles: Sequence[Path],
    out: Path,
    *,
    published: PublishedTable | None = None,
    resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
    dataset: Path | None = None,
    standard: Standard = STANDARD,
    force: bool = False,
    floors: Sequence[FloorRecord] = (),
) -> SiteData:
    """Verify ``bundles`` and write the leaderboard site into ``out`` (module doc).

    Args:
        bundles: Bundle files (``occubench bundle``).
        out: The site's folder (made if needed). A site written here before is replaced;
            files of another kind there are refused (``force``: replaced).
        published: A publication's stated results, shown apart (``published.load_published``).
        resamples: Bootstrap resamples of the boards' intervals.
        seed: Bootstrap seed.
        dataset: A dataset folder each bundle's logged task records are compared with.
        standard: What a standard bundle is (``bundle.STANDARD``: the benchmark's defaults).
        force: Replace an ``index.html`` or ``data.json`` that this command did not write.
        floors: Floor records (``occubench floor --out``): each row shows the floor measured
            under its board's simulator, verifier, task set and protocol, or "not measured".

    Returns:
        What the site shows.

    Raises:
        FileNotFoundError: a bundle file is missing.
        UsageError: no bundle is given, or one is given twice, or ``out`` holds files of
            another site or page (without ``force``).
    """
    if not bundles:
        raise UsageError("no bundle given")
    refuse_foreign(out, SITE_FILES, ours=is_site(out), force=force)
    (out / RECORDS).mkdir(parents=True, exist_ok=True)
    env = _environment()
    verified: list[tuple[str, VerifiedBundle]] = []
    lines: list[BundleLine] = []
    records: dict[str, str] = {}
    for path in bundles:
        vb = read_bundle(path, dataset=dataset, standard=standard)
        slug = _slug(path, vb.verification.sha256)
        if slug in records:
            raise UsageError(f"{path}: the same bundle is given twice")
        records[slug] = _write_record(vb.verification, slug, out, env)
        lines.append(_bundle_line(path, slug, vb.verification, records[slug]))
        if vb.verification.outcome is not Outcome.FAILED:
            verified.append((slug, vb))
    data = SiteData(
        generated=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        boards=_boards(verified, records, resamples, seed, floors),
        bundles=lines,
        published=_published(published) if published is not None else None,
    )
    write_index(data, out)
    return data


def _write_record(result: Verification, slug: str, out: Path, env: Environment) -> str:
    """Write a bundle's verification record (JSON and its page); the page's path in the site."""
    write_fresh(out / RECORDS / f"{slug}.json", result.model_dump_json(indent=1) + "\n")
    write_fresh(
        out / RECORDS / f"{slug}.html",
        env.get_template("record.html.j2").render(result=result, slug=slug),
    )
    return f"{RECORDS}/{slug}.html"


def _bundle_line(path: Path, slug: str, result: Verification, record: str) -> BundleLine:
    """A bundle's line in the site's list of bundles."""
    return BundleLine(
        slug=slug,
        name=path.name,
        sha256=result.sha256,
        outcome=result.outcome,
        bundle_class=result.bundle_class,
        record=record,
        departures=len(result.departures),
        first_problem=(
            f"{result.problems[0].member}: {result.problems[0].message}" if result.problems else ""
        ),
    )


def write_index(data: SiteData, out: Path) -> Path:
    """Write the site's page (``index.html``) and ``data.json`` for ``data`` into ``out``."""
    code = script()
    write_fresh(out / DATA_FILE, data.model_dump_json(indent=1) + "\n")
    page = out / INDEX_FILE
    write_fresh(
        page,
        _environment()
        .get_template("site.html.j2")
        .render(
            data=data,
            data_json=page_data(data),
            csp=content_security_policy(code),
            script=Markup(code),  # our own file, allowed by its hash
            modes=MODES,
        ),
    )
    return page


def is_site(out: Path) -> bool:
    """Whether ``out`` holds a site this command wrote (its ``data.json`` reads as one)."""
    try:
        SiteData.model_validate_json((out / DATA_FILE).read_bytes())
    except (OSError, ValueError):
        return False
    return not (out / INDEX_FILE).is_symlink()

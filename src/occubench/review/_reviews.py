"""Expert reviews of samples and what the report makes of them.

A review is one person's look at one sample (``occubench review`` records them): their
own verdict, a 1-5 realism rating of the scenario and of the rubric, and a comment.
Reviews are exported as JSON or CSV (`Review` is the record) and read back here for
``occubench report --reviews FILE``:

- reviewer agreement: Cohen's kappa between the automatic verdict (checks and verifier
  combined, as scored) and the reviewers' verdict, with a bootstrap 95% interval, the
  confusion table and every disagreement;
- realism ratings per scenario and per industry;
- CR recomputed with the human verdict wherever one exists.

The human verdict of a sample is the strict majority of its reviewers' pass/fail
verdicts; "unsure" votes do not count, and a tie leaves the sample without one.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
from collections.abc import Sequence
from enum import Enum
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from occubench.analysis import MetricRow, cohen_kappa, group, setup_of, wilson_interval
from occubench.defaults import DEFAULT_BOOTSTRAP_RESAMPLES, DEFAULT_BOOTSTRAP_SEED
from occubench.errors import UsageError
from occubench.results import SampleRow
from occubench.text import csv_text, from_spreadsheet_cell

PASS = "pass"
FAIL = "fail"


class Verdict(str, Enum):
    """A reviewer's verdict on a sample."""

    PASS = PASS
    FAIL = FAIL
    UNSURE = "unsure"


class Review(BaseModel):
    """One reviewer's review of one sample (the export format of ``occubench review``)."""

    sample_key: str = Field(description="The sample: run id, task id and epoch (SampleRow).")
    reviewer: str = Field(min_length=1, description="Name the reviewer signed in with.")
    verdict: Verdict = Field(description="Whether the agent completed the task, in their view.")
    scenario_realism: int | None = Field(
        default=None, ge=1, le=5, description="How realistic the scenario is, 1 (not) to 5."
    )
    rubric_realism: int | None = Field(
        default=None, ge=1, le=5, description="How realistic the rubric is, 1 (not) to 5."
    )
    comment: str = Field(default="", description="Free text.")
    saved_at: dt.datetime = Field(description="When the review was last saved (UTC).")
    task_id: str = Field(default="", description="Task id (context, for reading the export).")
    scenario: str = Field(default="", description="Scenario of the task (context).")
    industry: str = Field(default="", description="Industry of the task (context).")
    agent: str = Field(default="", description="Agent of the sample's setup (context).")
    env_mode: str = Field(default="", description="Env mode of the sample (context).")
    automatic_verdict: str = Field(
        default="", description="pass, fail or error: the verdict as scored (context)."
    )


REVIEW_COLUMNS = list(Review.model_fields)
"""Columns of the CSV export, in order."""


class ReviewFileError(UsageError):
    """A reviews file could not be read; the message names the file, line and field."""


def reviews_csv(reviews: Sequence[Review]) -> str:
    """Reviews as CSV text (one row each, the columns of `Review`).

    A comment a spreadsheet would run as a formula is quoted (``csv_text``);
    `load_reviews` reads it back as it was written.
    """
    return csv_text((r.model_dump(mode="json") for r in reviews), REVIEW_COLUMNS)


def reviews_json(reviews: Sequence[Review]) -> str:
    """Reviews as a JSON document ``{"reviews": [...]}``."""
    return json.dumps({"reviews": [r.model_dump(mode="json") for r in reviews]}, indent=2)


def _problems(e: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, err['loc']))}: {err['msg']}" for err in e.errors())


def load_reviews(path: str | Path) -> list[Review]:
    """Read reviews exported as JSON (``.json``) or CSV (any other name).

    Raises:
        ReviewFileError: when the file is missing, unreadable, or a record is invalid
            (the message names the record's line for CSV, its index for JSON).

    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ReviewFileError(f"reviews file {path}: cannot read it ({e})") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ReviewFileError(f"reviews file {path}: not valid JSON: {e}") from None
        records = data.get("reviews") if isinstance(data, dict) else data
        if not isinstance(records, list):
            raise ReviewFileError(f'reviews file {path}: expected {{"reviews": [...]}} or a list')
        located = [(f"review {i}", record) for i, record in enumerate(records)]
    else:
        reader = csv.DictReader(io.StringIO(text))
        located = []
        for record in reader:
            cleaned = {
                k: from_spreadsheet_cell(v) if isinstance(v, str) else v
                for k, v in record.items()
                if k is not None and v != ""
            }
            located.append((f"line {reader.line_num}", cleaned))
    out = []
    for where, record in located:
        try:
            out.append(Review.model_validate(record))
        except ValidationError as e:
            raise ReviewFileError(f"reviews file {path}, {where}: {_problems(e)}") from None
    return out


def automatic_verdict(row: SampleRow) -> str:
    """The verdict as scored: pass, fail, or error (an infrastructure error, no verdict)."""
    return "error" if row.passed is None else (PASS if row.passed else FAIL)


def human_verdict(reviews: Sequence[Review]) -> str | None:
    """The strict majority of the reviewers' pass/fail verdicts (None on a tie or none)."""
    passes = sum(r.verdict is Verdict.PASS for r in reviews)
    fails = sum(r.verdict is Verdict.FAIL for r in reviews)
    if passes == fails:
        return None
    return PASS if passes > fails else FAIL


class Disagreement(BaseModel):
    """A sample where the reviewers' verdict differs from the automatic one."""

    sample_key: str
    task_id: str
    agent: str
    env_mode: str
    scenario: str
    automatic: str = Field(description="pass or fail, as scored.")
    human: str = Field(description="pass or fail, the reviewers' majority.")
    reviewers: list[str] = Field(description="Who reviewed the sample.")
    comments: list[str] = Field(description="Their comments (non-empty ones).")


class HumanAgreement(MetricRow):
    """Agreement of the automatic verdicts with the reviewers' verdicts."""

    reviews: int = Field(description="Reviews of samples in these logs.")
    reviewers: list[str] = Field(description="Who reviewed.")
    samples_reviewed: int = Field(description="Samples with at least one review.")
    compared: int = Field(description="Samples with an automatic and a human verdict.")
    undecided: int = Field(description="Reviewed samples without a human verdict (tie/unsure).")
    observed: float = Field(description="Share of compared samples where both agree.")
    kappa: float = Field(description="Cohen's kappa (nan when undefined).")
    low: float = Field(description="Bootstrap 95% interval of kappa, low end.")
    high: float = Field(description="Bootstrap 95% interval of kappa, high end.")
    confusion: dict[str, dict[str, int]] = Field(
        description="Counts by automatic verdict (outer key) and human verdict (inner key)."
    )
    disagreements: list[Disagreement]


class RealismRow(MetricRow):
    """Mean realism ratings of the reviews of one scenario or industry."""

    dimension: str = Field(description="scenario or industry.")
    group: str = Field(description="Its name.")
    reviews: int = Field(description="Reviews of its samples.")
    scenario_n: int = Field(description="Reviews that rated the scenario.")
    scenario_mean: float = Field(description="Mean scenario realism, 1-5 (nan without one).")
    rubric_n: int = Field(description="Reviews that rated the rubric.")
    rubric_mean: float = Field(description="Mean rubric realism, 1-5 (nan without one).")


class HumanRate(MetricRow):
    """CR of one setup in one mode as scored, and with human verdicts where they exist."""

    agent: str
    simulator: str
    env_mode: str
    scored: int = Field(description="Samples with a verdict (automatic or human).")
    automatic_rate: float = Field(description="CR as scored.")
    automatic_low: float
    automatic_high: float
    human_verdicts: int = Field(description="Samples whose verdict is now the reviewers'.")
    changed: int = Field(description="Of those, samples whose verdict changed.")
    rate: float = Field(description="CR with the human verdicts.")
    low: float = Field(description="Wilson 95% interval, low end.")
    high: float = Field(description="Wilson 95% interval, high end.")


class ReviewReport(MetricRow):
    """What the reviews say about a set of runs."""

    agreement: HumanAgreement
    realism: list[RealismRow]
    rates: list[HumanRate]
    unmatched: int = Field(description="Reviews of samples that are not in these logs.")


def _mean(values: Sequence[int]) -> float:
    return sum(values) / len(values) if values else math.nan


def _realism(rows: dict[str, SampleRow], reviews: Sequence[Review]) -> list[RealismRow]:
    out = []
    for dimension in ("scenario", "industry"):

        def name_of(review: Review, d: str = dimension) -> str:
            return str(getattr(rows[review.sample_key], d))

        for name, members in group(reviews, name_of).items():
            scenario = [r.scenario_realism for r in members if r.scenario_realism is not None]
            rubric = [r.rubric_realism for r in members if r.rubric_realism is not None]
            out.append(
                RealismRow(
                    dimension=dimension,
                    group=name,
                    reviews=len(members),
                    scenario_n=len(scenario),
                    scenario_mean=_mean(scenario),
                    rubric_n=len(rubric),
                    rubric_mean=_mean(rubric),
                )
            )
    return out


def _human_rates(rows: Sequence[SampleRow], verdicts: dict[str, str]) -> list[HumanRate]:
    out = []
    for (agent, simulator, mode), members in group(
        rows, lambda r: (*setup_of(r), r.env_mode)
    ).items():
        auto = [r.passed for r in members if r.passed is not None]
        final = []
        replaced = changed = 0
        for r in members:
            human = verdicts.get(r.sample_key)
            if human is None:
                if r.passed is not None:
                    final.append(r.passed)
                continue
            replaced += 1
            changed += r.passed is not None and r.passed != (human == PASS)
            final.append(human == PASS)
        before = wilson_interval(sum(auto), len(auto))
        after = wilson_interval(sum(final), len(final))
        out.append(
            HumanRate(
                agent=agent,
                simulator=simulator,
                env_mode=mode,
                scored=len(final),
                automatic_rate=before.estimate,
                automatic_low=before.low,
                automatic_high=before.high,
                human_verdicts=replaced,
                changed=changed,
                rate=after.estimate,
                low=after.low,
                high=after.high,
            )
        )
    return out


def review_report(
    rows: Sequence[SampleRow],
    reviews: Sequence[Review],
    n_resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
) -> ReviewReport:
    """Agreement, realism and human-verdict CR of ``rows`` from ``reviews``.

    A reviewer who saved twice for one sample counts once (their last save).
    """
    by_key = {r.sample_key: r for r in rows}
    latest: dict[tuple[str, str], Review] = {}
    for review in sorted(reviews, key=lambda r: r.saved_at):
        latest[(review.sample_key, review.reviewer)] = review
    matched = [r for r in latest.values() if r.sample_key in by_key]
    per_sample = group(matched, lambda r: r.sample_key)
    verdicts = {
        key: verdict for key, rs in per_sample.items() if (verdict := human_verdict(rs)) is not None
    }
    compared = [
        (automatic_verdict(by_key[key]), human)
        for key, human in verdicts.items()
        if by_key[key].passed is not None
    ]
    kappa = cohen_kappa(
        [a for a, _ in compared], [h for _, h in compared], n_resamples=n_resamples, seed=seed
    )
    confusion = {a: {h: 0 for h in (PASS, FAIL)} for a in (PASS, FAIL)}
    for a, h in compared:
        confusion[a][h] += 1
    disagreements = []
    for key, human in verdicts.items():
        row = by_key[key]
        if row.passed is None or automatic_verdict(row) == human:
            continue
        disagreements.append(
            Disagreement(
                sample_key=key,
                task_id=str(row.task_id),
                agent=setup_of(row)[0],
                env_mode=row.env_mode,
                scenario=row.scenario,
                automatic=automatic_verdict(row),
                human=human,
                reviewers=sorted(r.reviewer for r in per_sample[key]),
                comments=[r.comment for r in per_sample[key] if r.comment.strip()],
            )
        )
    agree = sum(a == h for a, h in compared)
    return ReviewReport(
        agreement=HumanAgreement(
            reviews=len(matched),
            reviewers=sorted({r.reviewer for r in matched}),
            samples_reviewed=len(per_sample),
            compared=len(compared),
            undecided=len(per_sample) - len(verdicts),
            observed=agree / len(compared) if compared else math.nan,
            kappa=kappa.estimate,
            low=kappa.low,
            high=kappa.high,
            confusion=confusion,
            disagreements=disagreements,
        ),
        realism=_realism(by_key, matched),
        rates=_human_rates(rows, verdicts),
        unmatched=len(latest) - len(matched),
    )

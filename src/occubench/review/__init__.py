"""Expert review: records, kappa, the agreement report; the local web app and its store."""

from occubench.review._app import create_app, review_from_form
from occubench.review._reviews import (
    Disagreement,
    HumanAgreement,
    HumanRate,
    RealismRow,
    Review,
    ReviewFileError,
    ReviewReport,
    Verdict,
    load_reviews,
    review_report,
    reviews_csv,
    reviews_json,
)
from occubench.review._store import (
    QueueItem,
    ReviewError,
    ReviewStore,
    SampleView,
    is_database,
    read_reviews,
)

__all__ = [
    "QueueItem",
    "ReviewError",
    "ReviewStore",
    "SampleView",
    "create_app",
    "is_database",
    "read_reviews",
    "review_from_form",
    "Disagreement",
    "HumanAgreement",
    "HumanRate",
    "RealismRow",
    "Review",
    "ReviewFileError",
    "ReviewReport",
    "Verdict",
    "load_reviews",
    "review_report",
    "reviews_csv",
    "reviews_json",
]

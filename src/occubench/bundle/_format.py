"""The bundle's files: what a bundle holds and what it says of itself.

A bundle is one ``.tar.gz`` holding, at its top level:

- ``manifest.json`` (``Manifest``): the format version, when and with which occubench
  and Inspect it was made, the report settings its summary was computed with, one
  ``RunRecord`` per log (the resolved run configuration and protocol points, the agent,
  simulator and verifier models, the user model when the run bound one, the declared
  task set and epochs, the world used), one
  ``DatasetRecord`` per dataset (its digest and task ids), the SHA-256 and size of every
  other file, and its own digest (SHA-256 of its canonical JSON without that field);
- ``logs/NNN-NAME.eval``: the Inspect logs;
- ``summary.json`` (``Summary``): the report of every comparable group of runs, as
  ``occubench report`` computes it (the numbers ``occubench verify`` recomputes);
- ``prices.json`` (a ``PriceTable``), when costs were priced;
- ``twin-fidelity.json`` (a list of ``TwinFidelity``), when simulators measured against
  the executable twins were given: the summary shows their figures beside each line and
  ``verify`` recomputes them from these steps.
"""

from __future__ import annotations

import hashlib
import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

from occubench.analysis import NAN_AS_STRING
from occubench.errors import ExitCode
from occubench.report import Report

BUNDLE_FORMAT = 5
"""Version of the bundle layout and its models (2: each report states its verdict flips and
the quality figures beside each line; 3: and the exploit guard's findings beside each line,
the agent's suspected exploits apart from the simulator's answers off contract; 4: and may
hold ``twin-fidelity.json``, the simulators' steps against the executable twins; 5: a run
that bound a simulated user states its user model (``RunRecord.user``), and the summary
groups runs whose tasks talked to different user models apart). An older occubench reads
a format 5 manifest's runs without their user model and would take the manifest for an
edited one: the version tells it the bundle is newer than it reads instead."""
REPORT_SECTIONS_SINCE: dict[str, int] = {"flips": 2, "quality": 2, "guard": 3}
"""Report sections a bundle states from the format that introduced them on; an older bundle
is verified without them (they are recomputed and shown, not compared)."""
RUN_FIELDS_SINCE: dict[str, int] = {"user": 5}
"""Run record fields a bundle states from the format that introduced them on; an older
bundle's runs are compared with their logs without them."""
MANIFEST = "manifest.json"
SUMMARY = "summary.json"
PRICES = "prices.json"
TWIN_FIDELITY = "twin-fidelity.json"
LOGS_DIR = "logs"
RELEASE_DIR = "release"
"""Where a bundle keeps runs of the release's harness: ``release/NNN-<run>/`` with the
run's ``results.jsonl`` and ``args.json``."""
WORLD_METADATA = "world"
"""Key of the world a run used in its log's task metadata (``{path, digest, mode, variant}``),
written by runs that answer from a recorded world; absent otherwise."""


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no spaces: the text a digest is taken of."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def sha256_hex(data: bytes) -> str:
    """SHA-256 of ``data`` in hex."""
    return hashlib.sha256(data).hexdigest()


class FileSum(BaseModel):
    """One file of the bundle: its SHA-256 and size."""

    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the file's bytes.")
    bytes: int = Field(ge=0, description="Size of the file.")


class WorldRef(BaseModel):
    """The recorded world a run's simulator answers came from (its log's ``world`` metadata)."""

    path: str | None = Field(default=None, description="Where the world was (as the run named it).")
    digest: str = Field(description="The world's digest (SHA-256 over its entries' digests).")
    mode: str = Field(description="record, replay or replay-live.")
    variant: int | str = Field(default=0, description="World variant (an int, or 'epoch').")


class DatasetRecord(BaseModel):
    """A dataset the bundle's runs used, as found when the bundle was made."""

    location: str = Field(description="The dataset folder the logs name.")
    name: str = Field(description="Its folder name.")
    digest: str | None = Field(
        default=None,
        description="SHA-256 over its files (``content_digest``); None when the folder was "
        "not there when the bundle was made.",
    )
    task_ids: list[str] | None = Field(
        default=None, description="Every task id it holds (None: not there to load)."
    )
    note: str = Field(default="", description="Why the digest is missing, if it is.")


class RunRecord(BaseModel):
    """One log of the bundle: the run (or shard) it records."""

    log: str = Field(description="The log's path in the bundle.")
    eval_id: str = Field(description="Inspect's eval id.")
    task: str = Field(description="Inspect task name.")
    agent: str = Field(description="The agent, as reports name it (model or agent system).")
    model: str = Field(description="The main model (the agent's).")
    reasoning_effort: str | None = Field(default=None, description="The agent's effort, if set.")
    simulator: str | None = Field(description="The simulator model.")
    verifier: str | None = Field(description="The verifier model (None: the simulator verified).")
    simulator_fallback: str | None = Field(
        default=None, description="The model re-asked after a failed online check, if bound."
    )
    user: str | None = Field(
        default=None,
        exclude_if=lambda value: value is None,
        description="The simulated user's model, when the run bound one (the log's ``user`` "
        "model role); absent from the manifest otherwise, as in bundles made before runs "
        "had a user (format 4 and older), so that their digests still hold.",
    )
    env_mode: str = Field(description="E0..E3.")
    config: dict[str, Any] = Field(description="The resolved run configuration (RunConfig).")
    points: dict[str, Any] = Field(description="The resolved protocol points.")
    dataset: str = Field(description="The dataset folder the run read (as logged).")
    dataset_digest: str | None = Field(
        default=None,
        description="The digest of that folder as the run read it, recorded when it started "
        "(None: a log from before runs recorded it).",
    )
    sample_ids: list[str] = Field(description="The declared task set: every sample id it ran.")
    epochs: int = Field(ge=1, description="The declared epochs.")
    world: WorldRef | None = Field(
        default=None, description="The recorded world its simulator answers came from."
    )
    inspect_version: str | None = Field(default=None, description="Inspect that wrote the log.")
    task_version: str | None = Field(default=None, description="Version of the occubench task.")


class ReleaseRunRecord(BaseModel):
    """A run of the public release's own harness in the bundle (its two files)."""

    results: str = Field(description="Its results.jsonl in the bundle.")
    args: str = Field(description="Its args.json in the bundle.")
    agent: str = Field(description="The agent model, as the release names it.")
    simulator: str = Field(description="The world model.")
    verifier: str | None = Field(description="The verifier model (None: the world model's).")
    env_mode: str = Field(description="E0..E3.")
    tasks: int = Field(ge=0, description="Results lines: tasks the harness evaluated.")


class Settings(BaseModel):
    """How the summary was computed (``occubench report``'s settings)."""

    resamples: int = Field(ge=1, description="Bootstrap resamples.")
    seed: int = Field(description="Bootstrap seed.")
    variance: bool = Field(
        default=True, description="Variance components and MDDs computed (ties at the MDD)."
    )
    priced: bool = Field(default=False, description="Costs priced from prices.json.")


class Manifest(BaseModel):
    """What a bundle holds and says of itself (``manifest.json``)."""

    format: int = Field(description="Bundle format version.")
    created: str = Field(description="When the bundle was made (ISO 8601, UTC).")
    occubench_version: str = Field(description="occubench that made the bundle.")
    inspect_version: str = Field(description="Inspect AI installed when it was made.")
    settings: Settings
    runs: list[RunRecord]
    release_runs: list[ReleaseRunRecord] = Field(
        default_factory=list,
        description="Runs of the release's harness (results.jsonl): custom, never ranked "
        "with occubench's (absent from the manifest when there are none).",
    )
    datasets: list[DatasetRecord]
    files: dict[str, FileSum] = Field(description="Every other file of the bundle: its sum.")
    digest: str = Field(default="", description="SHA-256 of this manifest without this field.")

    def computed_digest(self) -> str:
        """The digest this manifest should carry (its canonical JSON without ``digest``)."""
        body = self.model_dump(mode="json", exclude={"digest"})
        if not body["release_runs"]:  # a bundle of occubench logs: as before there were any
            del body["release_runs"]
        return sha256_hex(canonical_json(body).encode("utf-8"))


class SummaryGroup(BaseModel):
    """The report of one group of comparable runs."""

    model_config = NAN_AS_STRING

    label: str = Field(description="The group: its task set and protocol.")
    report: Report


class Summary(BaseModel):
    """Every number the bundle states (``summary.json``): one report per comparable group."""

    model_config = NAN_AS_STRING

    groups: list[SummaryGroup]


class BundleClass(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """How a verified bundle compares with the benchmark as the paper ran it."""

    STANDARD = "standard"
    """The paper protocol on the public release, default simulator and verifier settings, all
    tasks."""
    CUSTOM = "custom"
    """Anything else; the verification lists each departure."""


class Outcome(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What ``occubench verify`` found."""

    VERIFIED = "verified"
    """Every sum matches and every number of the summary was recomputed from the logs."""
    ERRORS = "errors"
    """Verified, but some samples ended in infrastructure errors."""
    INCOMPLETE = "incomplete"
    """Verified, but a run lacks some of its declared tasks or epochs."""
    FAILED = "failed"
    """A file was changed, a stated number does not follow from the logs, or the bundle is
    not one."""


EXIT_CODES = {
    Outcome.VERIFIED: ExitCode.OK,
    Outcome.ERRORS: ExitCode.SAMPLE_ERRORS,
    Outcome.INCOMPLETE: ExitCode.INCOMPLETE,
    Outcome.FAILED: ExitCode.BAD_INPUT,
}
"""The exit status of ``occubench verify`` for each outcome."""


class Problem(BaseModel):
    """One thing wrong with a bundle, and the file it is in."""

    member: str = Field(description="The bundle's file (a log's member after a colon).")
    message: str


class RunCheck(BaseModel):
    """What one log of the bundle holds against what it declares."""

    log: str
    agent: str
    simulator: str | None
    verifier: str | None
    user: str | None = Field(default=None, description="The user model it bound, if any.")
    env_mode: str
    tasks: int = Field(description="Tasks it declares.")
    epochs: int = Field(description="Epochs it declares.")
    samples: int = Field(description="Samples it holds.")
    missing: list[str] = Field(description="Declared task:epoch pairs it lacks.")
    duplicates: list[str] = Field(description="task:epoch pairs it holds more than once.")
    errors: int = Field(description="Samples that ended in an infrastructure error.")


class Verification(BaseModel):
    """The record of one ``occubench verify``: what was checked and what was found."""

    model_config = NAN_AS_STRING

    bundle: str = Field(description="The bundle's file name.")
    sha256: str = Field(description="SHA-256 of the bundle file.")
    outcome: Outcome
    bundle_class: BundleClass | None = Field(
        default=None, description="standard or custom (None when verification failed)."
    )
    departures: list[str] = Field(
        default_factory=list, description="Why it is custom: each way it departs."
    )
    problems: list[Problem] = Field(default_factory=list, description="Why it failed.")
    checked: list[str] = Field(default_factory=list, description="What was checked, one line each.")
    notes: list[str] = Field(default_factory=list, description="What could not be checked here.")
    runs: list[RunCheck] = Field(default_factory=list)
    manifest: Manifest | None = Field(default=None, description="The manifest, once it was read.")
    summary: Summary | None = Field(
        default=None, description="The summary recomputed from the logs (when they were read)."
    )

    @property
    def exit_code(self) -> ExitCode:
        """The exit status of ``occubench verify`` for this outcome."""
        return EXIT_CODES[self.outcome]

"""``occubench verify``: check a bundle, recompute what it states, say how standard it is.

A bundle is hostile input. In order, each step only on what the steps before passed:

1. **Bounds.** The file's size, then its members as ``archives.unpack_checked`` checks
   them (types, paths, counts, sizes: nothing is written before every header passed),
   unpacked into a temporary folder that is removed afterwards.
2. **Sums.** ``manifest.json`` (bounded, its nesting measured before it is parsed) must
   list every other file with its SHA-256 and size, and carry its own digest: a changed
   log, summary or price table, a file added or taken away, an edited manifest, each is
   named.
3. **Logs.** Every member of every log is decompressed within the log bounds, its JSON
   nesting measured and scanned for secrets (``_logs.log_problems``); only then does
   Inspect read a log.
4. **Claims.** Each log's record (configuration, protocol points, models, declared task
   set and epochs, world) is read again from its header and compared with the
   manifest's; the summary is recomputed from the logs' samples by the report's own
   functions (``_summary.compute_summary``) and compared number by number.
5. **Completeness.** Every task of each log's declared task set ran each declared epoch,
   once.
6. **Class.** ``standard`` or ``custom`` with every departure (``_standard``).

With ``dataset`` (a folder in the release layout), every sample's logged task and
environment record is compared with the dataset's: the runs of the bundle's dataset with
the folder's digest, else every run (the user named the folder to compare with). A task
the folder lacks or whose record differs fails the check, naming the task and its fields
(the first ``SHOWN_DIFFERENCES`` tasks, then how many more).
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tarfile
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import ValidationError

from occubench.archives import (
    ArchiveRefused,
    UnpackError,
    amount,
    unpack_checked,
    zip_members,
)
from occubench.bundle._bounds import BUNDLE_LIMITS, BundleLimits
from occubench.bundle._format import (
    BUNDLE_FORMAT,
    LOGS_DIR,
    MANIFEST,
    PRICES,
    RELEASE_DIR,
    REPORT_SECTIONS_SINCE,
    RUN_FIELDS_SINCE,
    SUMMARY,
    TWIN_FIDELITY,
    BundleClass,
    DatasetRecord,
    Manifest,
    Outcome,
    Problem,
    RunCheck,
    Verification,
)
from occubench.bundle._logs import (
    LOG_SUFFIX,
    file_problems,
    log_problems,
    member_rows,
    release_record,
    run_record,
)
from occubench.bundle._standard import STANDARD, Standard, departures
from occubench.bundle._summary import SHOWN_DIFFERENCES, as_json, compute_summary, differences
from occubench.costs import PriceTable
from occubench.dataset import DatasetError, content_digest, load_dataset
from occubench.errors import UsageError
from occubench.results import SampleRow
from occubench.text import nests_deeper, validation_line
from occubench.twins import TwinFidelity, fidelity_records


class VerifiedBundle(NamedTuple):
    """A bundle's verification and the samples its logs hold (empty when it failed)."""

    verification: Verification
    rows: list[SampleRow]
    twin: list[TwinFidelity] = []
    """The simulators' steps against the twins the bundle holds (empty: none, or it failed)."""


class _Failed(Exception):
    """Stop verifying: the problems found so far say why."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


class _Check:
    """One verification under way: its record, and where the bundle is unpacked."""

    def __init__(self, path: Path, work: Path, limits: BundleLimits) -> None:
        self.path = path
        self.folder = work / "bundle"
        self.limits = limits
        self.result = Verification(bundle=path.name, sha256="", outcome=Outcome.FAILED)

    def fail(self, member: str, message: str) -> _Failed:
        """Record a problem and return the exception that stops the verification."""
        self.result.problems.append(Problem(member=member, message=message))
        return _Failed()

    def json_file(self, name: str) -> Any:
        """A JSON file of the bundle, parsed once its size and nesting passed."""
        path = self.folder / name
        if path.stat().st_size > self.limits.json_bytes:
            raise self.fail(
                name, f"larger than a bundle's JSON file may be ({self.limits.json_bytes:,} bytes)"
            )
        data = path.read_bytes()
        if nests_deeper(data, self.limits.json_depth):
            raise self.fail(name, f"JSON nested deeper than {self.limits.json_depth} levels")
        try:
            return json.loads(data)
        except ValueError as e:
            raise self.fail(name, f"not JSON: {e}") from None

    def unpack(self) -> list[str]:
        """Check and unpack the bundle; the names of its files."""
        size = self.path.stat().st_size
        if size > self.limits.bundle_bytes:
            raise self.fail(
                self.path.name,
                f"refused: {size:,} bytes, more than a bundle can be "
                f"({amount(self.limits.bundle_bytes)})",
            )
        self.result.sha256 = _sha256(self.path)
        try:
            self.folder.mkdir()
            return unpack_checked(self.path, self.folder, self.limits, "a bundle")
        except ArchiveRefused as e:
            raise self.fail(self.path.name, str(e)) from None
        except UnpackError as e:
            raise self.fail(self.path.name, f"could not unpack it: {e}") from None
        except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as e:
            raise self.fail(self.path.name, f"corrupt or not a .tar.gz: {e}") from None

    def manifest(self, names: list[str]) -> Manifest:
        """The manifest, checked against the files and its own digest."""
        if MANIFEST not in names:
            raise self.fail(MANIFEST, "missing: this is not an occubench bundle")
        try:
            manifest = Manifest.model_validate(self.json_file(MANIFEST))
        except ValidationError as e:
            first = e.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise self.fail(MANIFEST, f"not a bundle manifest: {where}: {first['msg']}") from None
        if not 1 <= manifest.format <= BUNDLE_FORMAT:
            raise self.fail(
                MANIFEST,
                f"bundle format {manifest.format}; this occubench reads formats 1 to "
                f"{BUNDLE_FORMAT}",
            )
        self.result.manifest = manifest
        present = set(names) - {MANIFEST}
        for name in sorted(present - set(manifest.files)):
            self.fail(name, "not listed in the manifest: added after the bundle was made")
        for name in sorted(set(manifest.files) - present):
            self.fail(name, "listed in the manifest but not in the bundle")
        for name in sorted(present & set(manifest.files)):
            stated = manifest.files[name]
            path = self.folder / name
            if path.stat().st_size != stated.bytes or _sha256(path) != stated.sha256:
                self.fail(
                    name,
                    "its SHA-256 does not match the manifest: changed after the bundle was made",
                )
        if manifest.computed_digest() != manifest.digest:
            self.fail(MANIFEST, "its digest does not match its contents: the manifest was edited")
        logs = sorted(n for n in manifest.files if n.startswith(f"{LOGS_DIR}/"))
        if sorted(r.log for r in manifest.runs) != logs:
            self.fail(MANIFEST, "its runs do not name the bundle's logs one for one")
        released = sorted(n for n in manifest.files if n.startswith(f"{RELEASE_DIR}/"))
        named = sorted(n for r in manifest.release_runs for n in (r.results, r.args))
        if named != released:
            self.fail(MANIFEST, "its release runs do not name its release files one for one")
        for name in logs:
            if not name.endswith(LOG_SUFFIX):
                self.fail(name, f"a bundle's logs are {LOG_SUFFIX} files")
        if self.result.problems:
            raise _Failed()
        self.result.checked.append(
            f"files: the {len(manifest.files)} files the manifest lists, and only those, "
            "match their SHA-256 sums; the manifest's own digest matches"
        )
        return manifest

    def logs(self, manifest: Manifest) -> None:
        """Every member of every log within bounds, not nested too deep, free of secrets."""
        members = 0
        for run in manifest.runs:
            for problem in log_problems(self.folder / run.log, run.log, self.limits):
                self.result.problems.append(problem)
            members += 1
        released = [n for r in manifest.release_runs for n in (r.results, r.args)]
        self.result.problems += file_problems([(n, self.folder / n) for n in released], self.limits)
        if self.result.problems:
            raise _Failed()
        self.result.checked.append(
            f"logs: {members} logs, every member decompressed within bounds to its declared "
            f"size and CRC, JSON nested at most {self.limits.json_depth} levels, no secret"
        )

    def claims(self, manifest: Manifest) -> list[SampleRow]:
        """The runs' records as their headers give them; the samples of the logs."""
        for stated in manifest.runs:
            try:
                found = run_record(str(self.folder / stated.log), stated.log)
            except (UsageError, ValueError, OSError) as e:
                raise self.fail(stated.log, f"not a readable occubench log: {e}") from None
            unstated = {k for k, since in RUN_FIELDS_SINCE.items() if manifest.format < since}
            recorded = found.model_dump(mode="json", exclude=unstated)
            for line in differences(stated.model_dump(mode="json", exclude=unstated), recorded):
                self.fail(MANIFEST, f"run {stated.log}: {line} (from the log's header)")
        locations = {r.dataset for r in manifest.runs}
        if {d.location for d in manifest.datasets} != locations:
            self.fail(MANIFEST, "its datasets do not match the datasets its runs name")
        if self.result.problems:
            raise _Failed()
        for release in manifest.release_runs:
            try:
                found_release = release_record(
                    self.folder / release.results, release.results, release.args
                )
            except UsageError as e:
                raise self.fail(release.results, f"not the release's results: {e}") from None
            for line in differences(
                release.model_dump(mode="json"), found_release.model_dump(mode="json")
            ):
                self.fail(MANIFEST, f"release run {release.results}: {line} (from its files)")
        if self.result.problems:
            raise _Failed()
        logs = [(r.log, str(self.folder / r.log)) for r in manifest.runs]
        logs += [(r.results, str(self.folder / r.results)) for r in manifest.release_runs]
        try:
            rows = member_rows(logs, cache=False)
        except (ValueError, OSError, KeyError) as e:
            raise self.fail(LOGS_DIR, f"a log cannot be read as an Inspect log: {e}") from None
        released = (
            f", and {len(manifest.release_runs)} run(s) of the release's harness match their files"
            if manifest.release_runs
            else ""
        )
        self.result.checked.append(
            f"runs: the configuration, protocol points, models, task set and epochs of "
            f"{len(manifest.runs)} logs match their headers{released}; {len(rows)} samples read"
        )
        self.verdicts(rows)
        return rows

    def verdicts(self, rows: Sequence[SampleRow]) -> None:
        """Each verdict recomputed from the checks and votes its sample records."""
        for row in rows:
            if not row.verdict_follows:
                checks = f"checks {row.checks_passed}/{row.checks_total}"
                votes = f"judge {row.votes_yes}/{row.votes_total}"
                self.fail(
                    row.log,
                    f"sample {row.task_id} epoch {row.epoch}: verdict "
                    f"{'passed' if row.passed else 'failed'}, but its own record says "
                    f"{checks}, {votes}: the verdict was edited",
                )
        if self.result.problems:
            raise _Failed()
        scored = sum(r.passed is not None for r in rows)
        self.result.checked.append(
            f"verdicts: each of {scored} verdicts follows from its sample's checks and votes "
            "(all checks passed, a strict majority of votes)"
        )

    def prices(self, manifest: Manifest) -> PriceTable | None:
        """The bundle's price table, if its summary was priced."""
        if manifest.settings.priced != (PRICES in manifest.files):
            raise self.fail(MANIFEST, "its settings and its files disagree on prices")
        if PRICES not in manifest.files:
            return None
        try:
            return PriceTable.model_validate(self.json_file(PRICES))
        except ValidationError as e:
            raise self.fail(PRICES, f"not a price table: {e.errors()[0]['msg']}") from None

    def twin(self, manifest: Manifest) -> list[TwinFidelity]:
        """The simulators' steps against the twins the bundle holds (none: not measured)."""
        if TWIN_FIDELITY not in manifest.files:
            return []
        try:
            records = fidelity_records(self.json_file(TWIN_FIDELITY))
        except ValidationError as e:
            problem = validation_line(e)
            raise self.fail(TWIN_FIDELITY, f"not twin-fidelity records: {problem}") from None
        steps = sum(len(r.steps) for r in records)
        self.result.checked.append(
            f"twin fidelity: {len(records)} record(s), {steps:,} steps against the twins, the "
            "figures beside each line recomputed from them"
        )
        return records

    def summary(
        self,
        manifest: Manifest,
        rows: Sequence[SampleRow],
        prices: PriceTable | None,
        twin: Sequence[TwinFidelity] = (),
    ) -> None:
        """The summary recomputed from the samples, compared number by number."""
        if SUMMARY not in manifest.files:
            raise self.fail(SUMMARY, "missing: the bundle states no numbers")
        stated = self.json_file(SUMMARY)
        recomputed = compute_summary(rows, manifest.settings, prices, twin)
        self.result.summary = recomputed
        found = as_json(recomputed)
        later = _unstated_sections(manifest.format)
        wrong = differences(stated, _without(found, later))
        if wrong:
            shown = "; ".join(wrong[:SHOWN_DIFFERENCES])
            more = (
                f" (and {len(wrong) - SHOWN_DIFFERENCES} more)"
                if len(wrong) > SHOWN_DIFFERENCES
                else ""
            )
            raise self.fail(
                SUMMARY,
                f"{len(wrong)} stated number(s) do not follow from the logs: {shown}{more}",
            )
        self.result.checked.append(
            f"summary: {len(recomputed.groups)} group(s), {_leaves(found):,} values (CR per "
            "mode, industry, domain, scenario and difficulty, R, intervals, comparisons, "
            "MDDs, costs, verdict flips by cause, the quality figures and the exploit guard's "
            "findings beside each line) "
            "recomputed from the logs, every one as stated"
        )

        if later:
            self.result.checked.append(
                f"summary: bundle format {manifest.format} states no {', '.join(later)} "
                "(added in a later format): recomputed from the logs and shown, not compared"
            )

    def completeness(self, manifest: Manifest, rows: Sequence[SampleRow]) -> None:
        """Each log's declared tasks and epochs against the samples it holds."""
        by_log: dict[str, list[SampleRow]] = {}
        for row in rows:
            by_log.setdefault(row.log, []).append(row)
        for run in manifest.runs:
            held = by_log.get(run.log, [])
            seen: dict[str, int] = {}
            for row in held:
                key = f"{row.task_id}:{row.epoch}"
                seen[key] = seen.get(key, 0) + 1
            declared = [f"{i}:{e}" for i in run.sample_ids for e in range(1, run.epochs + 1)]
            self.result.runs.append(
                RunCheck(
                    log=run.log,
                    agent=run.agent,
                    simulator=run.simulator,
                    verifier=run.verifier,
                    user=run.user,
                    env_mode=run.env_mode,
                    tasks=len(run.sample_ids),
                    epochs=run.epochs,
                    samples=len(held),
                    missing=[k for k in declared if k not in seen],
                    duplicates=sorted(k for k, n in seen.items() if n > 1),
                    errors=sum(r.error is not None for r in held),
                )
            )
            extra = sorted(set(seen) - set(declared))
            if extra:
                self.fail(
                    run.log, f"holds samples outside its declared task set: {', '.join(extra[:5])}"
                )
        if self.result.problems:
            raise _Failed()
        short = [c for c in self.result.runs if c.missing or c.duplicates]
        self.result.checked.append(
            "completeness: every task of every declared task set ran its declared epochs once"
            if not short
            else f"completeness: {len(short)} log(s) lack declared task:epoch pairs or hold "
            "one twice"
        )

    def datasets(self, manifest: Manifest, dataset: Path | None) -> None:
        """Each stated dataset digest against its runs' (as they ran); then the records.

        With ``dataset``, the logged task records are compared with that folder where its
        digest is the stated one.
        """
        for record in manifest.datasets:
            logged = {r.dataset_digest for r in manifest.runs if r.dataset == record.location}
            recorded = {d for d in logged if d is not None}
            if recorded and (len(logged) > 1 or record.digest not in recorded):
                stated = record.digest[:12] if record.digest else "none"
                ran = ", ".join(sorted(d[:12] for d in recorded))
                self.fail(
                    MANIFEST,
                    f"dataset {record.name}: the bundle states digest {stated}, but its runs "
                    f"recorded {ran} when they ran",
                )
            elif not recorded and record.digest is not None:
                self.result.notes.append(
                    f"dataset {record.name}: its runs did not record the dataset's digest "
                    "(older logs); the stated digest is the folder's when the bundle was made"
                )
        if self.result.problems:
            raise _Failed()
        compared: list[DatasetRecord] = []
        if dataset is not None:
            digest = content_digest(dataset)
            compared = [d for d in manifest.datasets if d.digest == digest] or list(
                manifest.datasets
            )
            if compared:
                self._records(manifest, compared, dataset, digest)
        for record in manifest.datasets:
            if record not in compared and record.digest is not None:
                self.result.notes.append(
                    f"dataset {record.name}: digest {record.digest[:12]} as stated; the logged "
                    "task records were not compared with the dataset's files (give its folder "
                    "to compare them)"
                )
        for run in manifest.runs:
            if run.world is not None:
                self.result.notes.append(
                    f"{run.log}: its simulator answers came from world {run.world.digest[:12]} "
                    f"({run.world.mode}); the world itself is not in the bundle"
                )

    def _records(
        self, manifest: Manifest, records: Sequence[DatasetRecord], folder: Path, digest: str
    ) -> None:
        """Every logged sample's task and environment record against the dataset at ``folder``.

        ``records`` are the bundle's datasets whose runs are compared: the ones with the
        folder's digest, else every one (the user named the folder to compare with). A
        task the folder lacks, or whose record differs, fails the check, naming the task
        and its differing fields.
        """
        try:
            loaded = load_dataset(folder)
        except DatasetError as e:
            raise UsageError(f"the dataset at {folder} does not load: {e.issues[0]}") from None
        tasks = {str(t.task_id): t for t in loaded.tasks}
        locations = {r.location for r in records}
        found: dict[str, _Differing] = {}
        compared = 0
        for run in (r for r in manifest.runs if r.dataset in locations):
            bounds = self.limits.log_bounds()
            for name, data in zip_members(self.folder / run.log, bounds, f"the log {run.log}"):
                if not name.startswith("samples/"):
                    continue
                metadata = json.loads(data).get("metadata") or {}
                task_id = str(metadata.get("task_id"))
                task = tasks.get(task_id)
                fields = (
                    ["not in the dataset"]
                    if task is None
                    else _record_fields(
                        metadata, "task", task.model_dump(mode="json", exclude_none=True)
                    )
                    + _record_fields(
                        metadata, "env", loaded.env(task).model_dump(mode="json", exclude_none=True)
                    )
                )
                compared += 1
                if fields:
                    differing = found.setdefault(task_id, _Differing(run.log, name))
                    differing.fields.update(fields)
                    differing.logs.add(run.log)
                    differing.samples += 1
        names = ", ".join(r.name for r in records)
        if found:
            logs = {log for d in found.values() for log in d.logs}
            shown = [
                f"task {task_id}: {', '.join(sorted(d.fields))} ({d.samples} sample(s), first "
                f"{d.member if len(logs) == 1 else f'{d.log}:{d.member}'})"
                for task_id, d in list(found.items())[:SHOWN_DIFFERENCES]
            ]
            more = len(found) - len(shown)
            raise self.fail(
                logs.pop() if len(logs) == 1 else LOGS_DIR,
                f"{len(found)} logged task(s) of dataset {names} differ from the dataset at "
                f"{folder}: {'; '.join(shown)}{f' (and {more} more)' if more else ''}",
            )
        stated = ", ".join(sorted({str(r.digest)[:12] for r in records}))
        same = (
            f"digest {digest}"
            if all(r.digest == digest for r in records)
            else f"digest {digest[:12]}, not the stated {stated}: the folder differs elsewhere "
            "than in the records of the tasks that ran"
        )
        self.result.checked.append(
            f"dataset {names}: {compared} logged task and environment records match the "
            f"dataset at {folder} ({same})"
        )

    def classify(self, manifest: Manifest, standard: Standard, rows: Sequence[SampleRow]) -> None:
        """Standard or custom, and the outcome (a user model counts where a sample talked)."""
        talked = {r.log for r in rows if r.user_turns is not None}
        found = departures(
            manifest.runs, manifest.datasets, standard, manifest.release_runs, talked
        )
        self.result.bundle_class = BundleClass.CUSTOM if found else BundleClass.STANDARD
        self.result.departures = found
        if any(c.missing or c.duplicates for c in self.result.runs):
            self.result.outcome = Outcome.INCOMPLETE
        elif any(c.errors for c in self.result.runs):
            self.result.outcome = Outcome.ERRORS
        else:
            self.result.outcome = Outcome.VERIFIED


@dataclass
class _Differing:
    """A task whose logged record differs from the dataset's: how, and where first."""

    log: str
    """The log of the first sample found to differ."""
    member: str
    """That sample's member of its log (``samples/NAME.json``)."""
    fields: set[str] = field(default_factory=set)
    logs: set[str] = field(default_factory=set)
    """Every log holding a sample of the task that differs."""
    samples: int = 0


def _record_fields(metadata: dict[str, Any], name: str, expected: dict[str, Any]) -> list[str]:
    """The fields of a sample's logged record ``name`` that differ from ``expected``.

    ``NAME.FIELD`` for each top-level field that differs, is missing or is extra; ``NAME``
    alone when the sample logged no such record.
    """
    logged = metadata.get(name)
    if not isinstance(logged, dict):
        return [name]
    keys = sorted(set(logged) | set(expected))
    return [f"{name}.{k}" for k in keys if logged.get(k, _ABSENT) != expected.get(k, _ABSENT)]


_ABSENT = object()
"""A field a record does not hold (unequal to any value, None included)."""


def _leaves(value: Any) -> int:
    """How many numbers and strings a JSON value holds."""
    if isinstance(value, dict):
        return sum(_leaves(v) for v in value.values())
    if isinstance(value, list):
        return sum(_leaves(v) for v in value)
    return 1


def read_bundle(
    path: Path,
    *,
    standard: Standard = STANDARD,
    dataset: Path | None = None,
    limits: BundleLimits = BUNDLE_LIMITS,
) -> VerifiedBundle:
    """Verify a bundle (module doc) and read its samples.

    Args:
        path: The bundle file.
        standard: What a standard bundle is (``STANDARD``: the benchmark's defaults).
        dataset: A dataset folder to compare the logged task records with.
        limits: The bounds the bundle is held to.

    Returns:
        The verification and, unless it failed, the samples of the bundle's logs.

    Raises:
        FileNotFoundError: no file at ``path``.
        UsageError: ``dataset`` does not load.
    """
    if not path.is_file():
        raise FileNotFoundError(f"no bundle file at {path}")
    work = Path(tempfile.mkdtemp(prefix="occubench-verify-"))
    check = _Check(path, work, limits)
    rows: list[SampleRow] = []
    twin: list[TwinFidelity] = []
    try:
        manifest = check.manifest(check.unpack())
        check.logs(manifest)
        rows = check.claims(manifest)
        prices = check.prices(manifest)
        twin = check.twin(manifest)
        check.completeness(manifest, rows)
        check.summary(manifest, rows, prices, twin)
        check.datasets(manifest, dataset)
        check.classify(manifest, standard, rows)
    except _Failed:
        check.result.outcome = Outcome.FAILED
        rows, twin = [], []
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return VerifiedBundle(check.result, rows, twin)


def _unstated_sections(format_version: int) -> list[str]:
    """The report sections a bundle of this format does not state."""
    return [k for k, since in REPORT_SECTIONS_SINCE.items() if format_version < since]


def _without(summary: Any, sections: Sequence[str]) -> Any:
    """The summary's JSON with ``sections`` left out of each group's report."""
    if not sections:
        return summary
    groups = [
        {**g, "report": {k: v for k, v in g["report"].items() if k not in sections}}
        for g in summary["groups"]
    ]
    return {**summary, "groups": groups}


def verify_bundle(
    path: Path,
    *,
    standard: Standard = STANDARD,
    dataset: Path | None = None,
    limits: BundleLimits = BUNDLE_LIMITS,
) -> Verification:
    """Verify a bundle (module doc): its record (``read_bundle`` without the samples)."""
    return read_bundle(path, standard=standard, dataset=dataset, limits=limits).verification

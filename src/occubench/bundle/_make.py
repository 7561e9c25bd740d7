"""``occubench bundle``: a set of runs as one archive that someone else can check.

The logs are read as ``occubench report`` reads them, their runs recorded (configuration,
protocol points, models, task set, the world used), their datasets hashed, the summary
computed, and every member of every log, and every file the bundle adds, scanned for
secrets (``redaction``) and held to the bounds ``occubench verify`` applies: a hit
refuses the whole bundle, naming the member. The archive is written under a temporary
name beside ``out`` and renamed into place when it is complete.
"""

from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import io
import os
import tarfile
import tempfile
from collections.abc import Sequence
from importlib.metadata import version
from pathlib import Path
from urllib.parse import unquote, urlsplit

from occubench.bundle._bounds import BUNDLE_LIMITS, BundleLimits
from occubench.bundle._format import (
    BUNDLE_FORMAT,
    MANIFEST,
    PRICES,
    SUMMARY,
    TWIN_FIDELITY,
    DatasetRecord,
    FileSum,
    Manifest,
    Problem,
    RunRecord,
    Settings,
)
from occubench.bundle._logs import (
    LOG_SUFFIX,
    file_problems,
    log_problems,
    member_name,
    member_rows,
    release_members,
    release_record,
    run_record,
    text_problem,
)
from occubench.bundle._summary import compute_summary
from occubench.config import RunConfig
from occubench.costs import PriceTable
from occubench.dataset import (
    RELEASE_DATASET,
    TASKS_FILE,
    DatasetError,
    builtin_dataset_dir,
    builtin_name,
    configured_release,
    content_digest,
    load_dataset,
    release_dir,
)
from occubench.defaults import (
    DEFAULT_BOOTSTRAP_RESAMPLES,
    DEFAULT_BOOTSTRAP_SEED,
    DEFAULT_DATASET_ENV,
)
from occubench.errors import UsageError
from occubench.redaction import known_secrets
from occubench.results import RELEASE_ARGS, is_release_results, some_log_files
from occubench.twins import TwinFidelity, fidelity_json


class BundleRefused(UsageError):
    """The logs cannot be bundled as they are (a secret, a bound passed): each problem named."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        shown = "; ".join(f"{p.member}: {p.message}" for p in self.problems[:5])
        more = f" (and {len(self.problems) - 5} more)" if len(self.problems) > 5 else ""
        super().__init__(f"bundle refused: {shown}{more}")


def _dataset_folder(run: RunRecord) -> Path | None:
    """The folder a run's dataset is in here, without fetching anything."""
    named = RunConfig.model_validate(run.config).dataset or os.environ.get(DEFAULT_DATASET_ENV)
    builtin = builtin_dataset_dir(named) if named else None
    if builtin is not None:
        return builtin
    if named == RELEASE_DATASET:
        return release_dir(configured_release())
    for candidate in (named, run.dataset):
        if candidate and (Path(candidate) / TASKS_FILE).is_file():
            return Path(candidate)
    return None


def _dataset_name(folder: Path | None, location: str) -> str:
    """How a record names a dataset: a built-in's name, ``occubench`` or its folder's name."""
    if folder is not None:
        if (builtin := builtin_name(folder)) is not None:
            return builtin
        known = {release_dir(configured_release()).resolve(): RELEASE_DATASET}
        if folder.resolve() in known:
            return known[folder.resolve()]
    return Path(location).name or location


def dataset_records(runs: Sequence[RunRecord]) -> list[DatasetRecord]:
    """A record per dataset the runs name: the digest its runs recorded, and its task ids.

    The digest is the one the runs recorded when they started (``RunRecord.
    dataset_digest``), never the folder's as it is now: a folder edited for the runs and
    put back afterwards is stated as the runs read it. The task ids are the folder's
    when it still has that digest here. Logs from before runs recorded it give the
    folder's digest now, said in the record's note.
    """
    out = []
    for location in sorted({r.dataset for r in runs}):
        mine = [r for r in runs if r.dataset == location]
        logged = {r.dataset_digest for r in mine}
        folder = _dataset_folder(mine[0])
        name = _dataset_name(folder, location)
        if len(logged) > 1:
            note = f"its runs read {len(logged)} different versions of {location!r}"
            out.append(DatasetRecord(location=location, name=name, note=note))
            continue
        (recorded,) = logged
        here = folder is not None and (folder / TASKS_FILE).is_file()
        now = content_digest(folder) if here and folder is not None else None
        tasks = None
        if folder is not None and now is not None and (recorded is None or now == recorded):
            try:
                tasks = [str(t.task_id) for t in load_dataset(folder).tasks]
            except DatasetError as e:
                note = f"the dataset at {folder} does not load ({len(e.issues)} problem(s))"
                out.append(DatasetRecord(location=location, name=name, note=note))
                continue
        if recorded is not None:
            note = (
                ""
                if now == recorded
                else (
                    "the folder has changed since the runs read it: its digest is the runs' "
                    "and its task ids are not known here"
                )
            )
            out.append(
                DatasetRecord(
                    location=location, name=name, digest=recorded, task_ids=tasks, note=note
                )
            )
        elif now is None:
            note = f"the dataset folder {location!r} is not on the machine that made the bundle"
            out.append(DatasetRecord(location=location, name=name, note=note))
        else:
            note = "its runs did not record its digest (older logs): the folder's when bundled"
            out.append(
                DatasetRecord(location=location, name=name, digest=now, task_ids=tasks, note=note)
            )
    return out


def _local(file: str) -> str:
    """A log's local path (Inspect lists a folder's logs as ``file://`` URIs)."""
    parts = urlsplit(file)
    path = unquote(parts.path) if parts.scheme == "file" else file
    if "://" in path or not path.endswith(LOG_SUFFIX):
        raise UsageError(
            f"{file}: a bundle holds local {LOG_SUFFIX} logs (convert a JSON log with "
            "inspect log convert)"
        )
    return path


def _file_sum(path: Path) -> FileSum:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return FileSum(sha256=digest.hexdigest(), bytes=path.stat().st_size)


def _bytes_sum(data: bytes) -> FileSum:
    return FileSum(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))


def _add(
    tar: tarfile.TarFile, name: str, data: bytes | None = None, path: Path | None = None
) -> None:
    """Add a plain file (mode 0644, no owner) from bytes or from a file."""
    info = tarfile.TarInfo(name)
    info.mode = 0o644
    info.mtime = int(dt.datetime.now(dt.UTC).timestamp())
    if data is not None:
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
        return
    assert path is not None
    info.size = path.stat().st_size
    with path.open("rb") as f:
        tar.addfile(info, f)


def _write(out: Path, files: dict[str, bytes], logs: Sequence[tuple[str, str]]) -> None:
    """Write the archive under a temporary name beside ``out``, then rename it into place."""
    out.parent.mkdir(parents=True, exist_ok=True)
    handle, partial = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent)
    try:
        with os.fdopen(handle, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as gz:
            with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                _add(tar, MANIFEST, files[MANIFEST])
                for name in sorted(n for n in files if n != MANIFEST):
                    _add(tar, name, files[name])
                for member, file in logs:
                    _add(tar, member, path=Path(file))
        os.replace(partial, out)
    except BaseException:
        Path(partial).unlink(missing_ok=True)
        raise


def make_bundle(
    logs: Sequence[str | Path],
    out: Path,
    *,
    prices: PriceTable | None = None,
    twin: Sequence[TwinFidelity] = (),
    resamples: int = DEFAULT_BOOTSTRAP_RESAMPLES,
    seed: int = DEFAULT_BOOTSTRAP_SEED,
    limits: BundleLimits = BUNDLE_LIMITS,
) -> Manifest:
    """Bundle the runs of ``logs`` (files or folders) into ``out`` (a ``.tar.gz``).

    Args:
        logs: Inspect log files or folders (read recursively); local ``.eval`` logs.
        out: The bundle file to write (replaced if it exists).
        prices: Prices of the runs' models: the summary's costs are priced with them and
            the table travels in the bundle.
        twin: Simulators measured against the executable twins (``audit --twin``): the
            summary shows their figures beside each line and the records travel in the
            bundle.
        resamples: Bootstrap resamples of the summary's intervals.
        seed: Bootstrap seed.
        limits: The bounds every log is held to (those ``occubench verify`` applies).

    Returns:
        The bundle's manifest.

    Raises:
        UsageError: no logs, a log that is not a local ``.eval`` of an occubench run.
        BundleRefused: a log or a file of the bundle holds a secret or passes a bound.
    """
    found = some_log_files(logs)
    releases = [file for file in found if is_release_results(Path(file))]
    files = [_local(file) for file in found if file not in releases]
    pairs = [(member_name(i, file), file) for i, file in enumerate(files, start=1)]
    runs = [run_record(file, member) for member, file in pairs]
    problems = [p for member, file in pairs for p in log_problems(Path(file), member, limits)]
    release_runs, release_files = [], []
    for i, file in enumerate(releases, start=1):
        results_member, args_member = release_members(i, file)
        release_runs.append(release_record(Path(file), results_member, args_member))
        release_files += [
            (results_member, file),
            (args_member, str(Path(file).parent / RELEASE_ARGS)),
        ]
    problems += file_problems([(m, Path(f)) for m, f in release_files], limits)
    if problems:
        raise BundleRefused(problems)
    settings = Settings(resamples=resamples, seed=seed, variance=True, priced=prices is not None)
    read = pairs + [(r.results, file) for r, file in zip(release_runs, releases, strict=True)]
    summary = compute_summary(member_rows(read, cache=True), settings, prices, twin)
    added = {SUMMARY: (summary.model_dump_json(indent=1) + "\n").encode("utf-8")}
    if prices is not None:
        added[PRICES] = (prices.model_dump_json(indent=1) + "\n").encode("utf-8")
    if twin:
        added[TWIN_FIDELITY] = fidelity_json(twin)
    sums = {name: _bytes_sum(data) for name, data in added.items()}
    sums |= {member: _file_sum(Path(file)) for member, file in [*pairs, *release_files]}
    manifest = Manifest(
        format=BUNDLE_FORMAT,
        created=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        occubench_version=version("occubench"),
        inspect_version=version("inspect_ai"),
        settings=settings,
        runs=runs,
        release_runs=release_runs,
        datasets=dataset_records(runs),
        files=dict(sorted(sums.items())),
    )
    manifest.digest = manifest.computed_digest()
    added[MANIFEST] = (manifest.model_dump_json(indent=1) + "\n").encode("utf-8")
    secrets = known_secrets()
    scanned = [text_problem(name, data, limits, secrets) for name, data in added.items()]
    if any(scanned):
        raise BundleRefused([p for p in scanned if p is not None])
    _write(out, added, [*pairs, *release_files])
    return manifest

"""The results store: each log's sample rows as a Parquet table, cached beside the log.

A report over a paper-sized grid reads tens of thousands of samples; Inspect's
per-sample reader validates each whole sample (events included) and costs about 10 ms
a sample. ``occubench report`` instead reads each log once into a columnar table and
keeps it beside the log, as ``LOG.eval.rows.parquet``; the next report over the same
logs reads only the tables.

- **Keyed by the log's content.** A table records the digest of the log it was built
  from (``log_digest``: for an ``.eval`` file, its zip directory, which holds the size
  and CRC-32 of every member, so any change to a sample, a header or a summary changes
  it; for another file, its bytes) and the store's schema version. A table whose key
  does not match is rebuilt; one that cannot be written (a read-only folder) is
  skipped, and the log is read each time.
- **Local logs only.** Logs named by a remote URL (``s3://``) are read each time.
- **Columns** are the fields of ``SampleRow`` (``results._row``): strings, integers,
  floats and booleans as such; token counts by role (``tokens``, ``input_tokens``, ...)
  as ``map<string, int64>``; ``faults``, ``agent_wires`` and ``exploit_evidence`` as JSON text;
  ``task_id`` as text with ``task_id_is_int`` telling whether it was a number; ``sample_key``,
  ``faults_applied`` and ``faults_retried`` are included for queries.
  ``occubench report --format parquet`` writes the same table for all the samples
  of a report (``samples.parquet``), to query with DuckDB (``SELECT agent_model,
  avg(passed::INT) FROM 'samples.parquet' GROUP BY 1``) or pandas
  (``pandas.read_parquet``).

Trajectories for the HTML drill-down are read from the logs only for the samples the
page shows (``read_log_samples``: those members of the zip, nothing else).

A sample's JSON is parsed with orjson; a document orjson refuses is parsed again with
Python's ``json`` (``log_json``). Inspect writes a float that is not a number as
``NaN``, ``Infinity`` or ``-Infinity``, as Python's ``json`` does (a simulator may answer
with one), and orjson refuses those (and a number beyond a double, ``1e400``): every
log Inspect writes is read, and only such a sample pays the slower parser.
"""

from __future__ import annotations

import hashlib
import json
import sys
import zipfile
import zlib
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import orjson
import pyarrow as pa
import pyarrow.parquet as pq
from inspect_ai.log import EvalLog, EvalSample, read_eval_log, read_eval_log_samples

from occubench.errors import UsageError
from occubench.results._row import SampleRow

if sys.version_info < (3, 14):
    import zipfile_zstd  # noqa: F401 - registers Inspect's zstd compression with zipfile


class LogReadError(UsageError):
    """A log file that cannot be read (not an Inspect log, or damaged): bad input."""


@contextmanager
def reading_log(log: str | Path) -> Iterator[None]:
    """Inspect's (or the zip reader's) refusal of a log file, as a ``LogReadError`` naming it.

    Only the reading goes in the block: a ``ValueError`` of what is done with the log
    afterwards is a bug, not bad input.
    """
    try:
        yield
    except UsageError:
        raise
    except (ValueError, zipfile.BadZipFile) as e:  # JSON, UTF-8, a zip's directory, a model
        raise LogReadError(f"{log} is not a readable log: {e}") from e


def log_header(log: str) -> EvalLog:
    """The header of a log (``read_eval_log(header_only=True)``).

    Raises:
        LogReadError: the file is not a readable log.
    """
    with reading_log(log):
        return read_eval_log(log, header_only=True)


def log_samples(log: str, **options: Any) -> Iterator[EvalSample]:
    """The samples of a log (``read_eval_log_samples``, ``all_samples_required=False``).

    Raises:
        LogReadError: the file is not a readable log.
    """
    with reading_log(log):
        yield from read_eval_log_samples(log, all_samples_required=False, **options)


STORE_SUFFIX = ".rows.parquet"
"""Suffix of a log's cached table: ``LOG.eval`` -> ``LOG.eval.rows.parquet``."""
STORE_VERSION = "12"
"""Schema version of the tables: a table of another version is rebuilt."""
KEY_FIELD = b"occubench.log_digest"
VERSION_FIELD = b"occubench.store_version"
EXPORT_FILE = "samples.parquet"
"""File name of the export (``occubench report --format parquet``)."""

TOKEN_MAP = pa.map_(pa.string(), pa.int64())
"""Counts by name: tokens by role, online check failures by kind."""
SCHEMA = pa.schema(
    [
        ("log", pa.string()),
        ("run_id", pa.string()),
        ("harness", pa.string()),
        ("agent_model", pa.string()),
        ("agent_model_name", pa.string()),
        ("reasoning_effort", pa.string()),
        ("reasoning_tokens", pa.int64()),
        ("simulator_model", pa.string()),
        ("verifier_model", pa.string()),
        ("regraded_from", pa.string()),
        ("regraded_from_run", pa.string()),
        ("env_mode", pa.string()),
        ("fault_count", pa.int64()),
        ("fault_duration", pa.int64()),
        ("fault_engine", pa.string()),
        ("protocol", pa.string()),
        ("errors_count_as_failures", pa.bool_()),
        ("seed", pa.int64()),
        ("simulator_seed", pa.int64()),
        ("sim_fallback_model", pa.string()),
        ("epoch", pa.int64()),
        ("task_id", pa.string()),
        ("task_id_is_int", pa.bool_()),
        ("scenario", pa.string()),
        ("industry", pa.string()),
        ("domain", pa.string()),
        ("difficulty", pa.int64()),
        ("env_name", pa.string()),
        ("passed", pa.bool_()),
        ("votes_yes", pa.int64()),
        ("votes_total", pa.int64()),
        ("checks_passed", pa.int64()),
        ("checks_total", pa.int64()),
        ("error", pa.string()),
        ("error_source", pa.string()),
        ("stop_reason", pa.string()),
        ("agent_error", pa.string()),
        ("tool_calls", pa.int64()),
        ("faults", pa.string()),
        ("agent_wires", pa.string()),
        ("tokens", TOKEN_MAP),
        ("input_tokens", TOKEN_MAP),
        ("output_tokens", TOKEN_MAP),
        ("input_tokens_cache_read", TOKEN_MAP),
        ("input_tokens_cache_write", TOKEN_MAP),
        ("wall_time", pa.float64()),
        ("cost", pa.float64()),
        ("sim_checked", pa.int64()),
        ("simulator_suspect", pa.bool_()),
        ("sim_check_failures", TOKEN_MAP),
        ("user_model", pa.string()),
        ("user_turns", pa.int64()),
        ("user_errors", pa.int64()),
        ("user_ended", pa.bool_()),
        ("exploit_suspected", pa.bool_()),
        ("simulator_off_contract", pa.bool_()),
        ("exploit_zeroed", pa.bool_()),
        ("exploit_evidence", pa.string()),
        ("world", pa.string()),
        ("world_hits", pa.int64()),
        ("simulator_calls", pa.int64()),
        ("live_calls", pa.int64()),
        ("world_keys", pa.list_(pa.string())),
        ("trajectory", pa.list_(pa.string())),
        ("unread", pa.list_(pa.string())),
        ("sample_key", pa.string()),
        ("faults_applied", pa.int64()),
        ("faults_retried", pa.int64()),
    ]
)
"""Columns of the store and of the export (see the module's docstring)."""
MAP_COLUMNS = tuple(f.name for f in SCHEMA if f.type == TOKEN_MAP)
JSON_COLUMNS = ("faults", "agent_wires", "exploit_evidence")
"""Columns of lists of records, kept as JSON text."""
COMPUTED = ("sample_key", "faults_applied", "faults_retried", "task_id_is_int")
"""Columns that are not ``SampleRow`` fields (derived when the table is built)."""


def local_path(log: str) -> Path | None:
    """The file a log location names, if it is local (a path or a ``file://`` URL)."""
    if "://" not in log:
        return Path(log)
    url = urlparse(log)
    return Path(unquote(url.path)) if url.scheme == "file" else None


def log_digest(path: Path) -> str:
    """The content key of a log file (see the module's docstring)."""
    digest = hashlib.sha256()
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                digest.update(
                    f"{info.filename}\0{info.CRC}\0{info.file_size}\0{info.header_offset}\n".encode()
                )
    else:
        with path.open("rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
    return digest.hexdigest()


def store_path(log: str) -> Path | None:
    """Where a log's table is cached (None for a remote log)."""
    path = local_path(log)
    return None if path is None else path.with_name(path.name + STORE_SUFFIX)


def rows_table(rows: Sequence[SampleRow], metadata: dict[bytes, bytes] | None = None) -> pa.Table:
    """Sample rows as an Arrow table with ``SCHEMA``."""
    columns: dict[str, list[Any]] = {f.name: [] for f in SCHEMA}
    for row in rows:
        record = row.model_dump(exclude=set(JSON_COLUMNS))
        record["task_id_is_int"] = isinstance(row.task_id, int)
        record["task_id"] = str(row.task_id)
        for name in JSON_COLUMNS:
            record[name] = orjson.dumps(row.model_dump(mode="json", include={name})[name]).decode()
        for name, value in record.items():  # choices (env mode, protocol, ...) as their values
            if isinstance(value, Enum):
                record[name] = value.value
        for name in MAP_COLUMNS:
            record[name] = list(record[name].items())
        for name, values in columns.items():
            values.append(record[name])
    return pa.table(columns, schema=SCHEMA.with_metadata(metadata or {}))


def table_rows(table: pa.Table) -> list[SampleRow]:
    """The sample rows of a table written by ``rows_table``."""
    columns = {name: table.column(name).to_pylist() for name in table.column_names}
    rows = []
    for i in range(table.num_rows):
        record = {name: values[i] for name, values in columns.items() if name not in COMPUTED}
        if not columns["task_id_is_int"][i]:
            record["task_id"] = str(record["task_id"])
        else:
            record["task_id"] = int(record["task_id"])
        for name in JSON_COLUMNS:
            record[name] = orjson.loads(record[name])
        for name in MAP_COLUMNS:
            record[name] = dict(record[name])
        rows.append(SampleRow.model_validate(record))  # as cheap as constructing, and typed
    return rows


def _cached(path: Path, key: str) -> pa.Table | None:
    """The table at ``path`` if it was built from the log with this key by this version."""
    try:
        table = pq.read_table(path)
    except (OSError, pa.ArrowException):
        return None
    meta = table.schema.metadata or {}
    if meta.get(KEY_FIELD) != key.encode() or meta.get(VERSION_FIELD) != STORE_VERSION.encode():
        return None
    return table


def cached_rows(log: str, read: Callable[[str], list[SampleRow]]) -> list[SampleRow]:
    """A log's rows from its cached table, or ``read(log)`` (and then cached).

    Args:
        log: Log location (path or URL).
        read: Reads the rows from the log itself.
    """
    path, table_path = local_path(log), store_path(log)
    if path is None or table_path is None or not path.is_file():
        return read(log)
    key = log_digest(path)
    if table_path.exists():
        table = _cached(table_path, key)
        if table is not None:
            return table_rows(table)
    rows = read(log)
    table = rows_table(rows, {KEY_FIELD: key.encode(), VERSION_FIELD: STORE_VERSION.encode()})
    partial = table_path.with_name(table_path.name + ".partial")
    try:
        pq.write_table(table, partial)
        partial.replace(table_path)
    except OSError:  # a read-only log folder: no cache, the log is read each time
        partial.unlink(missing_ok=True)
    return rows


def write_parquet(rows: Sequence[SampleRow], path: Path) -> Path:
    """Write sample rows as one Parquet table (the store's columns); returns ``path``."""
    pq.write_table(rows_table(rows), path)
    return path


def sample_member(sample_id: int | str, epoch: int) -> str:
    """The zip member of one sample in an ``.eval`` log."""
    return f"samples/{sample_id}_epoch_{epoch}.json"


def log_json(data: bytes) -> Any:
    """A JSON document of a log: orjson, or Python's ``json`` for what orjson refuses.

    Raises:
        json.JSONDecodeError: neither reads it (orjson's error is a subclass).
    """
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(data)  # NaN, Infinity, -Infinity: module doc


EVENTS_KEY = b',"events":['
AFTER_EVENTS_KEY = b',"model_usage":'
ROW_KEYS = ("id", "epoch", "scores", "metadata", "store", "model_usage")
"""Keys a sample's JSON without its events must still have (else it is parsed whole)."""


def without_events(data: bytes) -> dict[str, Any]:
    """A sample's JSON parsed without its ``events`` (most of its bytes).

    Inspect writes a sample's fields in ``EvalSample`` order: the row's fields before
    ``events``, usage, times and the error after it. Raw ``"events":[`` and
    ``"model_usage":`` (quotes unescaped) can only be keys, never inside a string;
    cut at the first ``events`` key, the head closes as an object only if that key
    was at the top level, and a tail from ``model_usage`` parses only from the top-
    level one (one nested in the events leaves their closing brackets unmatched). Any
    other layout (another Inspect version) is parsed whole.
    """
    start = data.find(EVENTS_KEY)
    if start > 0:
        try:
            head = log_json(data[:start] + b"}")
        except json.JSONDecodeError:
            head = None
        at = start
        while head is not None and (at := data.find(AFTER_EVENTS_KEY, at + 1)) > 0:
            try:  # orjson only: a tail it refuses is read with the whole document
                tail = orjson.loads(b"{" + data[at + 1 :])
            except orjson.JSONDecodeError:
                continue
            if isinstance(head, dict) and isinstance(tail, dict):
                document = {**head, **tail}
                if all(key in document for key in ROW_KEYS):
                    return document
            break
    document = log_json(data)
    document.pop("events", None)
    return dict(document)


def eval_sample_documents(
    path: Path,
    members: Collection[str] | None = None,
    *,
    events: bool = True,
    unreadable: list[tuple[str, str]] | None = None,
) -> Iterator[Any]:
    """The JSON of the samples of an ``.eval`` log (all, or the named members), as dicts.

    Members are read in the order of the zip (the order Inspect wrote them); a member
    written twice (a sample replaced) is read once, as last written. Without
    ``events``, each sample is parsed without them (``without_events``). With
    ``unreadable``, a member that cannot be read (damaged, not a JSON object) is
    skipped and added to it as (member, why); without, it refuses the whole log.
    """
    parse = log_json if events else without_events
    with reading_log(path), zipfile.ZipFile(path) as archive:
        names = dict.fromkeys(archive.namelist())
        for name in names:
            wanted = name in members if members is not None else name.startswith("samples/")
            if not (wanted and name.endswith(".json")):
                continue
            if unreadable is None:
                yield parse(archive.read(name))
                continue
            try:
                document = parse(archive.read(name))
            except (ValueError, zipfile.BadZipFile, zlib.error, EOFError, RecursionError) as e:
                unreadable.append((name, f"{type(e).__name__}: {e}"))
                continue
            if isinstance(document, dict) and "id" in document and "epoch" in document:
                yield document
            else:
                unreadable.append((name, "not a sample's record (no id and epoch)"))


def read_log_samples(
    log: str, keys: Collection[tuple[int | str, int]]
) -> dict[tuple[str, int], Any] | None:
    """The JSON of the given samples (id, epoch) of a local ``.eval`` log, by (str(id), epoch).

    Only those members are read; one that cannot be read is left out. Returns None for
    another kind of log (the caller falls back to Inspect's reader).
    """
    path = local_path(log)
    if path is None or not path.is_file() or not zipfile.is_zipfile(path):
        return None
    members = {sample_member(i, e) for i, e in keys}
    documents = eval_sample_documents(path, members, unreadable=[])  # one that cannot: left out
    return {(str(doc["id"]), int(doc["epoch"])): doc for doc in documents}

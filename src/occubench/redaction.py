"""Secrets out of everything occubench writes: the one rule, and where it is applied.

A secret is any of:

- the value of an environment variable whose name says it holds one (``*_API_KEY``,
  ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ...);
- a password in a URL's userinfo (``https://user:KEY@host``) or the value of a query
  parameter that names a key (``?api_key=KEY``, ``&token=``, ``&sig=``) in any
  environment variable holding a URL (``<SERVICE>_BASE_URL``), with the Basic
  credentials a client derives from the userinfo;
- a value registered by the code that runs models (``register_secrets``): a model's API
  key, base URL secrets, sensitive model arguments and extra headers
  (``Authorization``, ``x-api-key``, ...; ``secrets_of_settings``).

Values shorter than ``MIN_SECRET_LENGTH`` are never taken for secrets (redacting "x"
would wreck every text). Text is redacted (``redact``) by replacing every known secret
with ``REDACTED`` and, whatever is known, by patterns that only secrets match: URL
userinfo passwords, key-naming query parameters, ``Bearer``/``Basic`` credentials and
API keys in their providers' formats (``sk-...``, ``AIza...``, ``hf_...``, ``gh*_...``).

Where it is applied: Inspect's log records (display, log file, trace files, the sample
transcript) through a filter on Inspect's log handler (``RedactionHooks`` installs it
when an eval starts); a run's log folder once its eval set ends (``redact_log_folder``:
the ``.eval`` members and ``logs.json``); report and export files as they are written;
error text shown in the terminal; a sweep agent's label (``redact_settings``). A bundle
(``occubench bundle``) is not redacted but scanned (``holds_secret``): every member of
every log and every file it adds; a hit refuses the bundle, naming the member.
"""

from __future__ import annotations

import base64
import functools
import logging
import os
import re
import threading
import zipfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qsl, unquote, urlsplit

from inspect_ai.hooks import Hooks, RunStart, hooks
from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

REDACTED = "[redacted]"
"""What a secret is replaced with."""
MIN_SECRET_LENGTH = 8
"""Shorter values are not treated as secrets."""

_SECRET_NAME = re.compile(
    r"(api[-_]?key|access[-_]?key|secret|token|passw(or)?d|credential|authorization|"
    r"(^|[-_])auth($|[-_])|(^|[-_])sig(nature)?$|(^|[-_])key$|cookie)",
    re.IGNORECASE,
)
"""Names (environment variables, settings, headers, query parameters) of secret values."""

_PATTERNS: list[tuple[tuple[str, ...], re.Pattern[str], str]] = [
    # userinfo password in a URL: scheme://user:PASSWORD@host (matched from the "://",
    # which the engine finds by a literal search: fast on a page of many megabytes)
    (
        ("://",),
        re.compile(r"(://[^:/@\s\"'<>\\]*:)[^@/\s\"'<>\\]+(@)"),
        r"\1[redacted]\2",
    ),
    # a key-naming query or form parameter: ?api_key=VALUE, &token=VALUE, &sig=VALUE
    (
        ("=",),
        re.compile(
            r"([?&;](?:[\w.-]*(?:api[-_]?key|token|secret|password|passwd|signature)|key|sig|auth)=)"
            r"[^&#;\s\"'<>\\]+",
            re.IGNORECASE,
        ),
        r"\1[redacted]",
    ),
    # credentials of an Authorization header
    (
        ("Bearer", "Basic", "Token"),
        re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}"),
        r"\1 [redacted]",
    ),
    # API keys in their providers' formats
    (
        ("sk-", "AIza", "hf_", "gh"),
        re.compile(
            r"\b(?:sk-(?:ant-|proj-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,}"
            r"|hf_[A-Za-z0-9]{20,}|gh[pousr]_[A-Za-z0-9]{20,})"
        ),
        REDACTED,
    ),
]
"""Secret-shaped text: (literals one of which a match contains, the pattern, its
replacement); a text holding none of the literals is not searched."""

_registered: set[str] = set()
_lock = threading.Lock()


def is_secret_name(name: str) -> bool:
    """Whether a variable, setting, header or parameter of this name holds a secret."""
    return bool(_SECRET_NAME.search(name))


def _long_enough(values: Iterable[str]) -> set[str]:
    """The values long enough to be secrets (file paths, which no key looks like, left out)."""
    return {v for v in values if len(v) >= MIN_SECRET_LENGTH and not v.startswith(("/", "~"))}


def secrets_of_url(url: str) -> set[str]:
    """The secrets a URL carries.

    Its userinfo password (and the Basic credentials a client makes of it) and the
    values of its key-naming query parameters.
    """
    try:
        parts = urlsplit(url.strip())
        password = parts.password
        username = parts.username or ""
    except ValueError:
        return set()
    found = set()
    if password:
        found.add(password)
        found.add(unquote(password))
        pair = f"{unquote(username)}:{unquote(password)}".encode()
        found.add(base64.b64encode(pair).decode())
    found |= {value for name, value in parse_qsl(parts.query) if is_secret_name(name)}
    return _long_enough(found)


def secrets_of_settings(settings: Mapping[str, Any] | None) -> set[str]:
    """Secrets in settings (model arguments, extra headers, nested).

    The values of secret-naming keys (a ``Bearer`` header's token too) and URL secrets.
    """
    found: set[str] = set()
    for name, value in (settings or {}).items():
        if isinstance(value, Mapping):
            found |= secrets_of_settings(value)
        elif isinstance(value, str):
            if is_secret_name(str(name)):
                found.add(value)
                found |= {part for part in value.split() if part.lower() not in ("bearer", "basic")}
            if "://" in value:
                found |= secrets_of_url(value)
    return _long_enough(found)


@functools.lru_cache(maxsize=1024)
def _variable_secrets(name: str, value: str) -> frozenset[str]:
    """The secrets one environment variable holds (cached: the environment is read often)."""
    found = {value} if is_secret_name(name) else set()
    if "://" in value:
        found |= secrets_of_url(value)
    return frozenset(_long_enough(found))


def environment_secrets(environ: Mapping[str, str] | None = None) -> set[str]:
    """The secrets in the environment (module doc)."""
    env = os.environ if environ is None else environ
    found: set[str] = set()
    for name, value in env.items():
        found |= _variable_secrets(name, value)
    return found


def register_secrets(values: Iterable[str]) -> None:
    """Treat these values as secrets in this process from now on (short ones are ignored)."""
    with _lock:
        _registered.update(_long_enough(v for v in values if isinstance(v, str)))


def known_secrets() -> frozenset[str]:
    """Every secret known in this process: the environment's and the registered ones."""
    with _lock:
        registered = set(_registered)
    return frozenset(environment_secrets() | registered)


@functools.lru_cache(maxsize=32)
def _secret_pattern(secrets: frozenset[str]) -> re.Pattern[str] | None:
    if not secrets:
        return None
    ordered = sorted(secrets, key=len, reverse=True)  # a key that contains another goes first
    return re.compile("|".join(re.escape(s) for s in ordered))


def redact(text: str, secrets: frozenset[str] | None = None) -> str:
    """``text`` with its secrets replaced by ``REDACTED``.

    Every known secret (``known_secrets()`` unless given) and every secret-shaped
    pattern (module doc).
    """
    pattern = _secret_pattern(known_secrets() if secrets is None else secrets)
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    for hints, rule, replacement in _PATTERNS:
        if any(hint in text for hint in hints):
            text = rule.sub(replacement, text)
    return text


def holds_secret(text: str, secrets: frozenset[str] | None = None) -> bool:
    """Whether ``redact`` would change ``text``: it holds a known or secret-shaped value."""
    return redact(text, secrets) != text


def redact_strings(value: Any, secrets: frozenset[str] | None = None) -> Any:
    """A JSON-like value with ``redact`` applied to every string in it (keys kept)."""
    chosen = known_secrets() if secrets is None else secrets
    if isinstance(value, str):
        return redact(value, chosen)
    if isinstance(value, Mapping):
        return {k: redact_strings(v, chosen) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_strings(v, chosen) for v in value]
    return value


def redact_model(model: M) -> M:
    """A copy of a pydantic model with ``redact`` applied to every string in it."""
    return type(model).model_validate(redact_strings(model.model_dump()))


def redact_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """Settings (headers, model arguments) fit to show.

    The string values of secret-naming keys are replaced whole, every other string
    redacted; a number is no secret (``reasoning_tokens: 4096`` names a budget).
    """
    shown: dict[str, Any] = {}
    for name, value in settings.items():
        if isinstance(value, Mapping):
            shown[name] = redact_settings(value)
        elif is_secret_name(str(name)) and isinstance(value, str) and value:
            shown[name] = REDACTED
        else:
            shown[name] = redact_strings(value)
    return shown


class RedactingFilter(logging.Filter):
    """Redacts a log record's message and its string extras (trace details, errors)."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite the record in place; never drop it."""
        secrets = known_secrets()
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # arguments that do not fit the message: left alone
            return True
        cleaned = redact(message, secrets)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        if record.exc_info and not record.exc_text:  # formatted here, so that it is redacted
            record.exc_text = logging.Formatter().formatException(record.exc_info)
            record.exc_info = None
        for name, value in list(record.__dict__.items()):
            if isinstance(value, str) and name not in _RECORD_FIELDS:
                record.__dict__[name] = redact(value, secrets)
        return True


_RECORD_FIELDS = frozenset(
    ("name", "levelname", "pathname", "filename", "module", "funcName", "threadName")
    + ("processName", "taskName", "msg")
)
"""A log record's own string fields, never secret (``msg`` is handled apart)."""


_FILTER = RedactingFilter()


def redact_log_records() -> None:
    """Put the redacting filter on every handler of the root and Inspect loggers.

    Inspect's one log handler (display, log file, trace file, sample transcript) hangs
    on both; handlers added later get it at the next call (each eval's start).
    """
    for name in ("", "inspect_ai"):
        for handler in logging.getLogger(name).handlers:
            if _FILTER not in handler.filters:
                handler.addFilter(_FILTER)


@hooks(
    name="occubench_redaction",
    description="Redacts secrets from Inspect's log records (display, traces, transcripts).",
)
class RedactionHooks(Hooks):
    """Installs the redacting filter once Inspect has set up its logging (each run)."""

    async def on_run_start(self, data: RunStart) -> None:
        """An eval run starts: Inspect's log handler exists now."""
        redact_log_records()


def _member_secrets(data: bytes, secrets: frozenset[str]) -> bool:
    return any(s.encode() in data for s in secrets)


_HEADER_MEMBERS = ("header.json", "_journal/start.json")
"""Members of an ``.eval`` redacted by pattern too (small; model settings live there)."""


def _redacted_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, secrets: frozenset[str]
) -> tuple[bytes, bool]:
    """A member's bytes with its secrets redacted, and whether redacting changed them."""
    data = archive.read(info)  # a folder entry reads as b"": unchanged
    if info.filename not in _HEADER_MEMBERS and not _member_secrets(data, secrets):
        return data, False
    cleaned = redact(data.decode("utf-8", errors="surrogateescape"), secrets)
    encoded = cleaned.encode("utf-8", errors="surrogateescape")
    return encoded, encoded != data


def redact_eval_file(path: Path, secrets: frozenset[str] | None = None) -> bool:
    """Rewrite an ``.eval`` log (a zip) with its members redacted; True if it changed.

    Every member holding a known secret is redacted (its text through ``redact``); the
    header members by pattern too. Members keep their names, order and compression;
    the file is replaced atomically. One member is in memory at a time: the log is
    read once to find the first member that changes, then written member by member
    (a secret found in every sample costs no more memory than one found in none).
    """
    chosen = known_secrets() if secrets is None else secrets
    partial = path.with_name(f".{path.name}.redacting")
    with zipfile.ZipFile(path) as archive:
        infos = archive.infolist()
        first = next(
            (i for i, info in enumerate(infos) if _redacted_member(archive, info, chosen)[1]),
            None,
        )
        if first is None:
            return False
        try:
            with zipfile.ZipFile(partial, "w") as out:
                for index, info in enumerate(infos):
                    if index < first:  # unchanged: copied as it is
                        out.writestr(info, archive.read(info))
                    else:
                        out.writestr(info, _redacted_member(archive, info, chosen)[0])
        except BaseException:
            partial.unlink(missing_ok=True)
            raise
    os.replace(partial, path)
    return True


def redact_text_file(path: Path, secrets: frozenset[str] | None = None) -> bool:
    """Redact a text file in place (atomically); True if it changed."""
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    cleaned = redact(text, known_secrets() if secrets is None else secrets)
    if cleaned == text:
        return False
    partial = path.with_name(f".{path.name}.redacting")
    partial.write_text(cleaned, encoding="utf-8", errors="surrogateescape")
    os.replace(partial, path)
    return True


def _log_files(folder: Path) -> Iterator[Path]:
    yield from sorted(folder.rglob("*.eval"))
    yield from sorted(folder.rglob("*.json"))


def redact_log_folder(folder: str | Path) -> list[Path]:
    """Redact a local log folder: its ``.eval`` logs and JSON files (``logs.json``).

    Returns:
        The files rewritten. A file that cannot be read as it should is left alone
        (the log housekeeping names it).
    """
    root = Path(folder)
    if not root.is_dir():
        return []
    secrets = known_secrets()
    rewritten = []
    for path in _log_files(root):
        try:
            done = (
                redact_eval_file(path, secrets)
                if path.suffix == ".eval"
                else redact_text_file(path, secrets)
            )
        except (OSError, ValueError, zipfile.BadZipFile):
            continue
        if done:
            rewritten.append(path)
    return rewritten


def model_secrets(model: Any) -> set[str]:
    """The secrets an Inspect model was built with.

    Its API key, its base URL's secrets, secret model arguments and extra headers (read
    duck-typed, for any provider).
    """
    api = getattr(model, "api", None)
    found: set[str] = set()
    key = getattr(api, "api_key", None)
    if isinstance(key, str):
        found.add(key)
    base_url = getattr(api, "base_url", None)
    if isinstance(base_url, str):
        found |= secrets_of_url(base_url)
    found |= secrets_of_settings(getattr(model, "model_args", None))
    config = getattr(model, "config", None)
    found |= secrets_of_settings(getattr(config, "extra_headers", None))
    return _long_enough(found)

"""The public OccuBench release: downloaded at a pinned revision, checked, unpacked, cached.

``fetch_release`` downloads the release's source archive (a ``.tar.gz`` of the public
repository at ``PUBLIC_RELEASE.revision``; the URL can be overridden), with a progress
bar, and checks it twice: the archive's SHA-256 when one is given (``--sha256``), and
always for the pinned release the SHA-256 of its data files (``content_digest``: the
path and SHA-256 of every file under ``data/``, which does not depend on how the host
compresses the archive). The release layout under ``data/`` is then unpacked into the
cache (``release_dir``), where ``--dataset occubench`` finds it.

A mirror is not trusted beyond those checksums, and the archive is held to what a
release can be (``FetchLimits``) before anything is written: a download larger than
the bound is refused (from its Content-Length, else stopped as it goes past); every
member header is read (each read, and all of them, bounded) and checked, and the
archive refused when one is not a plain file or folder (a release has no links,
devices or FIFOs), would land outside the unpacked folder, or when the files add up to
more, or the members are more, than a release can hold; the whole stream is then
decompressed once, without being kept, up to a bound. Only then are the members
written, each file created new, never through a link, with exactly the bytes its checked
header declares. Those checks and the writing are ``occubench.archives``'s (bundles of
results are unpacked the same way).

Nothing half-written is left behind: the download and the unpacked tree live in
temporary names inside the target's parent folder and only a complete, checked tree
is renamed into place. A corrupt archive, a wrong checksum, a download cut short, an
archive refused or without the release layout: each is a ``FetchError`` with one clear
message.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
import zlib
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from occubench.archives import (
    CHUNK,
    ArchiveRefused,
    TarBounds,
    UnpackError,
    amount,
    unpack_checked,
)
from occubench.dataset._errors import DatasetError
from occubench.dataset._loader import CONFIGS_DIR, SCENARIOS_FILE, TASKS_FILE, load_dataset
from occubench.dataset._suite import shared_dir
from occubench.defaults import (
    DEFAULT_CACHE_ENV,
    DEFAULT_FETCH_MAX_DOWNLOAD_BYTES,
    DEFAULT_FETCH_MAX_MEMBERS,
    DEFAULT_FETCH_MAX_UNPACKED_BYTES,
    DEFAULT_FETCH_TIMEOUT,
    DEFAULT_RELEASE_SHA256_ENV,
    DEFAULT_RELEASE_URL_ENV,
)

RELEASE_DATASET = "occubench"
"""Dataset name of the cached public release (``--dataset occubench``)."""

SOURCE_FILE = "SOURCE.json"
"""File beside the unpacked release saying where it came from (url, revision, digests)."""


class FetchLimits(TarBounds):
    """What a release can be: the bounds a download and its archive are held to."""

    download_bytes: int = Field(
        default=DEFAULT_FETCH_MAX_DOWNLOAD_BYTES,
        gt=0,
        description="Most bytes the archive may have as downloaded (compressed).",
    )
    unpacked_bytes: int = Field(
        default=DEFAULT_FETCH_MAX_UNPACKED_BYTES,
        gt=0,
        description="Most bytes the archive's files may add up to.",
    )
    members: int = Field(
        default=DEFAULT_FETCH_MAX_MEMBERS,
        gt=0,
        description="Most members (files and folders) the archive may hold.",
    )

    def describe(self) -> str:
        """One line saying what ``fetch_release`` refuses."""
        return (
            f"An archive over {amount(self.download_bytes)}, or unpacking to over "
            f"{amount(self.unpacked_bytes)} or {self.members:,} files and folders, is "
            "refused, as is one holding a link, a device or a path outside the target."
        )


RELEASE_LIMITS = FetchLimits()
"""The bounds ``fetch_release`` applies unless it is given others (``DEFAULT_FETCH_MAX_*``)."""


class ReleaseSource(BaseModel):
    """Where a release comes from and what it must hash to."""

    name: str = Field(description="Name of the cached copy's folder.")
    url: str = Field(description="The archive's URL (a .tar.gz of the repository).")
    revision: str = Field(description="The repository commit the archive is of.")
    archive_sha256: str | None = Field(
        default=None, description="SHA-256 of the archive file (checked when known)."
    )
    content_sha256: str | None = Field(
        default=None,
        description="SHA-256 of the data files (``content_digest``; checked when known).",
    )
    added: list[str] = Field(
        default_factory=list,
        description="Files the fetch put beside the release's own (its license, from the "
        "repository's top), which ``content_digest`` leaves out.",
    )


PUBLIC_RELEASE = ReleaseSource(
    name="occubench-d47bffb524b5",
    url="https://codeload.github.com/GregxmHu/OccuBench/tar.gz/"
    "d47bffb524b51d69748bf6801e803de04ed40820",
    revision="d47bffb524b51d69748bf6801e803de04ed40820",
    content_sha256="07ad52a48ff578c89ba601d2061c2d6b9433bc933537a8140e0a2c1cb43ba4b4",
)
"""The public OccuBench release (repository GregxmHu/OccuBench, Apache-2.0), pinned."""


class FetchError(RuntimeError):
    """The release could not be fetched: download, checksum, archive or layout."""


Progress = Callable[[int, int | None], None]
"""Called as bytes arrive: (bytes so far, total bytes or None)."""


def cache_root() -> Path:
    """Folder of cached datasets: ``$OCCUBENCH_CACHE``, else ``$XDG_CACHE_HOME/occubench``."""
    chosen = os.environ.get(DEFAULT_CACHE_ENV)
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "occubench"


def release_dir(source: ReleaseSource = PUBLIC_RELEASE) -> Path:
    """Where the cached copy of ``source`` is (or will be) unpacked."""
    return cache_root() / "datasets" / source.name


def content_digest(root: Path) -> str:
    """SHA-256 over every file under ``root``: its relative path and its own SHA-256.

    A built-in dataset that reads the suite's scenario pool and env configs
    (``shared_dir``) hashes them as if they were in its folder.

    ``SOURCE.json`` and the files it lists as added by the fetch are left out, so a
    cached release hashes to the digest its data files had in the archive.
    """
    added: set[str] = set()
    if (root / SOURCE_FILE).is_file():
        try:
            added = set(ReleaseSource.model_validate_json((root / SOURCE_FILE).read_bytes()).added)
        except ValueError:  # not a fetch's record: nothing is left out
            pass
    files = {p.relative_to(root).as_posix(): p for p in root.rglob("*") if p.is_file()}
    shared = shared_dir(root)
    if shared.resolve() != root.resolve():  # a built-in dataset: the suite's envs count too
        files |= {
            p.relative_to(shared).as_posix(): p
            for p in [shared / SCENARIOS_FILE, *(shared / CONFIGS_DIR).rglob("*")]
            if p.is_file()
        }
    lines = []
    for relative, path in sorted(files.items()):
        if relative == SOURCE_FILE or relative in added:
            continue
        lines.append(f"{relative}\0{hashlib.sha256(path.read_bytes()).hexdigest()}\n")
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def _download(url: str, target: Path, progress: Progress | None, most: int) -> str:
    """Stream ``url`` into ``target``, at most ``most`` bytes; the SHA-256 of what arrived."""
    digest = hashlib.sha256()
    try:
        with urllib.request.urlopen(url, timeout=DEFAULT_FETCH_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            if total is not None and total > most:
                raise FetchError(
                    f"refused: {url} announces {total:,} bytes, more than a release can be "
                    f"({amount(most)})"
                )
            done = 0
            with target.open("wb") as out:
                while chunk := response.read(CHUNK):
                    done += len(chunk)
                    if done > most:
                        raise FetchError(
                            f"refused: the download from {url} went past {amount(most)}, "
                            "more than a release can be"
                        )
                    out.write(chunk)
                    digest.update(chunk)
                    if progress is not None:
                        progress(done, total)
    except urllib.error.HTTPError as e:
        raise FetchError(f"download failed: {url} answered HTTP {e.code} {e.reason}") from None
    except (urllib.error.URLError, OSError) as e:  # refused, reset, timed out, cut short
        reason = getattr(e, "reason", e)
        raise FetchError(f"download failed: {url}: {reason}") from None
    if total is not None and done != total:
        raise FetchError(f"download cut short: {done} of {total} bytes arrived from {url}")
    return digest.hexdigest()


def _unpack(archive: Path, into: Path, limits: FetchLimits) -> Path:
    """Check the archive against ``limits``, then unpack it into ``into`` (made here).

    The checks and the writing are ``archives.unpack_checked``'s: the member headers
    first (a bomb is refused at its header), then the whole stream read through, then
    the members written.

    Returns:
        The folder that holds the release layout.
    """
    into.mkdir()
    try:
        unpack_checked(archive, into, limits, "a release")
    except ArchiveRefused as e:
        raise FetchError(str(e)) from None
    except UnpackError as e:
        raise FetchError(f"could not unpack the release into {into}: {e}") from None
    except (tarfile.TarError, EOFError, OSError, ValueError, zlib.error) as e:
        raise FetchError(f"the archive is corrupt or not a .tar.gz: {e}") from None
    found = sorted(into.rglob(TASKS_FILE), key=lambda p: len(p.parts))
    if not found:
        raise FetchError(f"the archive holds no release layout ({TASKS_FILE} not found)")
    return found[0].parent


def fetch_release(
    to: Path | None = None,
    *,
    source: ReleaseSource = PUBLIC_RELEASE,
    progress: Progress | None = None,
    limits: FetchLimits | None = None,
) -> Path:
    """Download, check and unpack the release into ``to`` (default: ``release_dir``).

    An existing copy at ``to`` is kept (it was checked when it was written). ``limits``
    (default ``RELEASE_LIMITS``) bound the download and what the archive unpacks to.

    Returns:
        The folder of the release layout.

    Raises:
        FetchError: the download failed or was cut short, a checksum does not match,
            the archive is corrupt, refused (too large, or holding a link, a device or
            a path outside its folder) or does not hold the release layout.
    """
    limits = limits or RELEASE_LIMITS
    target = (to or release_dir(source)).resolve()
    if (target / TASKS_FILE).is_file():
        return target
    if target.exists() and any(target.iterdir()):
        raise FetchError(f"{target} exists and is not a release folder: give another --to")
    target.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}-partial-", dir=target.parent))
    try:
        archive = work / "release.tar.gz"
        got = _download(source.url, archive, progress, limits.download_bytes)
        if source.archive_sha256 and got != source.archive_sha256.lower():
            raise FetchError(
                f"checksum mismatch: the archive's SHA-256 is {got}, expected "
                f"{source.archive_sha256} (url {source.url})"
            )
        data = _unpack(archive, work / "unpacked", limits)
        if source.content_sha256:
            digest = content_digest(data)
            if digest != source.content_sha256.lower():
                raise FetchError(
                    f"checksum mismatch: the release's data files hash to {digest}, expected "
                    f"{source.content_sha256} (revision {source.revision})"
                )
        try:
            load_dataset(data)
        except DatasetError as e:
            raise FetchError(
                f"the archive's release layout does not load ({len(e.issues)} problem(s); "
                f"first: {e.issues[0]})"
            ) from None
        notice = data.parent / "LICENSE"
        added = []
        if notice.is_file() and not (data / "LICENSE").exists():
            shutil.copyfile(notice, data / "LICENSE")  # the release's license travels with it
            added.append("LICENSE")
        (data / SOURCE_FILE).write_text(
            source.model_copy(update={"archive_sha256": got, "added": added}).model_dump_json(
                indent=2
            )
            + "\n"
        )
        if target.exists():
            target.rmdir()  # an empty folder (checked above)
        data.rename(target)
    finally:
        if isinstance(progress, DownloadBar):
            progress.stop()
        shutil.rmtree(work, ignore_errors=True)
    return target


def release_source(url: str | None = None, sha256: str | None = None) -> ReleaseSource:
    """The pinned release, fetched from ``url`` when given (a mirror, or your own archive).

    Without ``sha256`` the pinned data digest is checked (a mirror of the same release
    holds the same files); with it, the archive's own SHA-256 is checked instead.
    """
    if not url:
        return PUBLIC_RELEASE
    if sha256:
        return PUBLIC_RELEASE.model_copy(
            update={"url": url, "archive_sha256": sha256, "content_sha256": None}
        )
    return PUBLIC_RELEASE.model_copy(update={"url": url})


def configured_release() -> ReleaseSource:
    """The release source the environment names, else the pinned one.

    ``$OCCUBENCH_RELEASE_URL`` and ``$OCCUBENCH_RELEASE_SHA256`` are read as
    ``release_source`` reads its arguments.
    """
    return release_source(
        os.environ.get(DEFAULT_RELEASE_URL_ENV), os.environ.get(DEFAULT_RELEASE_SHA256_ENV)
    )


class DownloadBar:
    """A progress bar on stderr (bytes, speed) for a download; ``stop`` ends it."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, DownloadColumn, TextColumn, TransferSpeedColumn
        from rich.progress import Progress as Bar

        self._bar = Bar(
            TextColumn("fetching the release"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            console=Console(stderr=True),
        )
        self._task = self._bar.add_task("release", total=None)
        self._bar.start()

    def __call__(self, done: int, total: int | None) -> None:
        """Bytes so far (of ``total``)."""
        self._bar.update(self._task, completed=done, total=total)

    def stop(self) -> None:
        """End the bar (idempotent)."""
        self._bar.stop()


def stderr_progress() -> DownloadBar:
    """A new ``DownloadBar`` (``fetch_release`` stops it when it is done)."""
    return DownloadBar()

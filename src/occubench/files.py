"""Files written for a person: whole or not at all, created fresh, never through a link.

A command that writes into a path the user names must not leave a half-written file on a
full disk, follow a symbolic link planted there (and overwrite its target), keep the mode
of a file that was there (a key readable by every user), or replace a file it did not
write. ``write_fresh`` writes a new file beside the path (``O_EXCL | O_NOFOLLOW``, the
mode asked), flushes it and renames it over the path: the rename is atomic and replaces
a link itself, never its target. ``refuse_foreign`` is the rule for the files a command
would replace in a folder the user named.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterable
from pathlib import Path

from occubench.errors import UsageError


def write_fresh(path: Path, data: str | bytes, *, mode: int = 0o644) -> Path:
    """Write ``path`` whole with ``mode`` (module doc); returns ``path``.

    Raises:
        OSError: the folder cannot be written (full, read-only); ``path`` is then as it was.
    """
    payload = data.encode() if isinstance(data, str) else data
    partial = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    descriptor = os.open(partial, flags, mode)
    try:
        with os.fdopen(descriptor, "wb") as out:
            out.write(payload)
            out.flush()
            os.fsync(out.fileno())
        os.chmod(partial, mode)  # the mode asked, whatever the umask left
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    return path


def refuse_foreign(folder: Path, names: Iterable[str], *, ours: bool, force: bool) -> None:
    """Refuse to replace files in ``folder`` that this command did not write.

    Args:
        folder: The folder the user named.
        names: The files the command writes there.
        ours: Whether the folder holds this command's earlier output (its own marker).
        force: The user said to replace them (``--force``).

    Raises:
        UsageError: a named file exists (or is a link), the folder is not the command's
            own output, and ``force`` is off.
    """
    if ours or force:
        return
    found = sorted(n for n in names if (folder / n).exists() or (folder / n).is_symlink())
    if found:
        raise UsageError(
            f"{folder} already holds {', '.join(found)}, not written by this command: "
            "choose another folder, or give --force to replace them"
        )

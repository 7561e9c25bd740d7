"""Runs of the reference agents to bundle, and ways to change a bundle after it was made.

The runs are the demo's in small: reference agents on three tasks of the built-in
reference suite, the canned simulator, plans given, checks grading (offline, about a
second a run once Inspect is loaded).
"""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from conftest import run_task

TASKS = "1001,1002,1003"
"""Task ids of the reference suite the runs take."""
SIMULATOR = {"simulator": "occubench/canned"}
FAKE_KEY = "sk-proj-" + "A1b2C3d4E5f6G7h8" * 2
"""An API key in OpenAI's format (not a real one): what the redaction scan must find."""


def reference_runs(
    folder: Path,
    agents: Sequence[str] = ("occubench/careful", "occubench/no-retry"),
    modes: Sequence[str] = ("E0", "E1", "E2", "E3"),
    **task_args,
) -> Path:
    """Each agent in each mode, one log folder per run under ``folder``."""
    task_args.setdefault("task_ids", TASKS)
    task_args.setdefault("dataset", "reference")
    for agent in agents:
        for mode in modes:
            run_task(
                folder / f"{agent.split('/')[-1]}-{mode}",
                agent=agent,
                roles=SIMULATOR,
                with_plan=True,
                env_mode=mode,
                **task_args,
            )
    return folder


def read_tar(path: Path) -> dict[str, bytes]:
    """A bundle's files by name, in archive order."""
    with tarfile.open(path, "r:gz") as tar:
        return {
            m.name: tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def write_tar(path: Path, files: dict[str, bytes]) -> Path:
    """Files as a .tar.gz, in the given order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())
    return path


def changed(bundle: Path, out: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    """A copy of ``bundle`` whose files ``change`` edited in place."""
    files = read_tar(bundle)
    change(files)
    return write_tar(out, files)


def rezip(log: bytes, change: Callable[[dict[str, bytes]], None]) -> bytes:
    """A log (.eval) whose members ``change`` edited in place (deflate-compressed)."""
    import zipfile_zstd  # noqa: F401 - Inspect's logs are zstd-compressed

    with zipfile.ZipFile(io.BytesIO(log)) as z:
        members = {name: z.read(name) for name in z.namelist()}
    change(members)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return out.getvalue()


def edit_json(members: dict[str, bytes], name: str, change: Callable[[dict], None]) -> None:
    """Edit one JSON member in place."""
    value = json.loads(members[name])
    change(value)
    members[name] = json.dumps(value).encode()


def resign(files: dict[str, bytes]) -> None:
    """Make the manifest agree with the files as they now are: sums and digest."""
    from occubench.bundle import MANIFEST, FileSum, Manifest

    manifest = Manifest.model_validate_json(files[MANIFEST])
    manifest.files = {
        name: FileSum(sha256=hashlib.sha256(data).hexdigest(), bytes=len(data))
        for name, data in files.items()
        if name != MANIFEST
    }
    manifest.digest = manifest.computed_digest()
    files[MANIFEST] = manifest.model_dump_json().encode()


def plant_key(folder: Path) -> None:
    """Put a fake API key into the first sample of the first log under ``folder``."""
    log = sorted(folder.rglob("*.eval"))[0]

    def plant(members):
        edit_json(
            members,
            "samples/1001_epoch_1.json",
            lambda s: s["metadata"].update(note=f"use {FAKE_KEY} to call the API"),
        )

    log.write_bytes(rezip(log.read_bytes(), plant))
    for cached in folder.rglob("*.parquet"):
        cached.unlink()


def user_runs(folder: Path, users: Sequence[str], agents: Sequence[str] = ("asking",)) -> Path:
    """Each scripted agent talking to each scripted user on the one-task user dataset.

    Paper protocol, scripted simulator and verifier; one log folder per run under
    ``folder/logs``, the dataset in ``folder/data``.
    """
    from conftest import SCRIPTED_ROLES
    from user_fixtures import user_dataset

    data = user_dataset(folder / "data")
    for agent in agents:
        for user in users:
            run_task(
                folder / "logs" / f"{agent}-{user}",
                agent=f"occubench/{agent}",
                roles={**SCRIPTED_ROLES, "user": f"occubench/{user}"},
                dataset=str(data),
                protocol="paper",
            )
    return folder / "logs"

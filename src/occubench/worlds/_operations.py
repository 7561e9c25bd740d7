"""What the ``occubench world`` commands do: stats, verify, merge, export.

Each takes a world folder or a packed world, read within ``WorldLimits``, and returns
data (the commands print it). ``merge_worlds`` and ``export_world`` write a new world
whole or not at all: under a temporary name beside the target, renamed into place.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import AwareDatetime, BaseModel, Field

from occubench.errors import UsageError
from occubench.worlds._models import (
    EntrySource,
    WorldContext,
    WorldLimits,
    WorldManifest,
    canonical_json,
    entry_key,
)
from occubench.worlds._packed import (
    CONTEXTS_FILE,
    MANIFEST_FILE,
    SEGMENTS_DIR,
    write_packed,
)
from occubench.worlds._read import ProblemKind, WorldProblem
from occubench.worlds._store import LOCKS_DIR, World

MERGED_SEGMENT = "merged.jsonl"
"""The one segment ``merge_worlds`` (and an export to a folder) writes."""
PACKED_SEGMENT = "world.jsonl"
"""The one segment ``export_world`` packs."""


class ContextStats(BaseModel):
    """One context of a world and how many keys it holds."""

    digest: str = Field(description="The context's digest.")
    model: str = Field(description="The simulator model.")
    layout: str = Field(description="The message style of the simulator's messages.")
    state_mode: str = Field(description="history | explicit.")
    variant: int = Field(description="The world variant.")
    keys: int = Field(description="Keys recorded under it.")


class AuthorStats(BaseModel):
    """Who made a world's entries: a model or a person, and how many."""

    source: EntrySource = Field(description="simulator | person.")
    author: str = Field(description="The model's or the person's name.")
    entries: int = Field(description="Distinct entries they made.")


class WorldStats(BaseModel):
    """What a world holds (``occubench world stats``)."""

    path: str = Field(description="The world folder or packed world.")
    packed: bool = Field(description="A packed world (one read-only file).")
    description: str = Field(description="The manifest's description.")
    created: AwareDatetime = Field(description="When the world was made.")
    digest: str = Field(description="The world's digest (World.digest).")
    segments: int = Field(description="Segment files.")
    bytes: int = Field(description="Bytes of its files (a packed world: of the file).")
    entries: int = Field(description="Distinct entries (lines with equal digests count once).")
    keys: int = Field(description="Keys: the calls the world answers.")
    duplicates: int = Field(description="Entries of a key with the answer of another.")
    conflicts: int = Field(description="Keys with more than one answer.")
    roots: int = Field(description="Keys of first calls (an empty path).")
    leaves: int = Field(description="Keys no recorded call continues: paths recorded.")
    deepest: int = Field(description="Calls on the longest recorded path.")
    contexts: list[ContextStats] = Field(description="The contexts, with their keys.")
    authors: list[AuthorStats] = Field(description="Who made the entries.")
    first: AwareDatetime | None = Field(description="The earliest entry's time.")
    last: AwareDatetime | None = Field(description="The latest entry's time.")
    unread: int = Field(description="Lines not read (torn or invalid: see world verify).")


class WorldVerification(BaseModel):
    """What ``occubench world verify`` found."""

    path: str = Field(description="The world folder or packed world.")
    digest: str = Field(description="The world's digest.")
    entries: int = Field(description="Valid entry lines read.")
    keys: int = Field(description="Keys the world answers.")
    contexts: int = Field(description="Contexts read.")
    problems: list[WorldProblem] = Field(description="Every problem, where it is.")

    @property
    def clean(self) -> bool:
        """Whether nothing is wrong."""
        return not self.problems


class WrittenWorld(BaseModel):
    """A world ``merge_worlds`` or ``export_world`` wrote."""

    out: str = Field(description="The world written.")
    packed: bool = Field(description="It is a packed world (one file).")
    sources: list[str] = Field(description="The worlds it was made from.")
    entries: int = Field(description="Entries written (distinct digests).")
    duplicates: int = Field(description="Entry lines left out: the same entry again.")
    contexts: int = Field(description="Contexts written.")
    conflicts: int = Field(description="Keys with more than one answer (kept; verify lists them).")
    unread: int = Field(description="Lines of the sources not read (torn or invalid).")
    digest: str = Field(description="The written world's digest.")
    sha256: str | None = Field(default=None, description="SHA-256 of a packed world's file.")


def _bytes(world: World) -> int:
    if world.packed:
        return world.path.stat().st_size
    files = [world.path / MANIFEST_FILE, world.path / CONTEXTS_FILE]
    folder = world.path / SEGMENTS_DIR
    if folder.is_dir():
        files += [folder / name for name in os.listdir(folder)]
    return sum(p.stat(follow_symlinks=False).st_size for p in files if p.exists())


def world_stats(path: str | Path, limits: WorldLimits | None = None) -> WorldStats:
    """Count what a world holds: entries, keys, contexts, its prefix tree, its authors.

    Raises:
        UsageError: not a world, or beyond ``limits``.
    """
    with World.open(path, writable=False, limits=limits) as world:
        contexts = world.contexts()
        seen: set[str] = set()
        answers: dict[str, set[str]] = {}
        parents: set[str] = set()
        roots: set[str] = set()
        authors: Counter[tuple[EntrySource, str]] = Counter()
        per_context: Counter[str] = Counter()
        deepest, times = 0, []
        for record in world.records():
            entry = record.entry
            if entry.digest in seen:
                continue
            seen.add(entry.digest)
            authors[entry.source, entry.author] += 1
            times.append(entry.created)
            if entry.key not in answers:
                per_context[entry.context_digest] += 1
            answers.setdefault(entry.key, set()).add(entry.answer_digest())
            deepest = max(deepest, len(entry.path) + 1)
            if not entry.path:
                roots.add(entry.key)
            if entry.path and entry.path[-1].failed is None:
                parents.add(entry_key(entry.context_digest, entry.path[:-1], entry.path[-1]))
        return WorldStats(
            path=str(world.path),
            packed=world.packed,
            description=world.manifest.description,
            created=world.manifest.created,
            digest=world.digest(),
            segments=world.segment_count,
            bytes=_bytes(world),
            entries=len(seen),
            keys=len(answers),
            duplicates=len(seen) - sum(len(a) for a in answers.values()),
            conflicts=sum(1 for a in answers.values() if len(a) > 1),
            roots=len(roots),
            leaves=sum(1 for key in answers if key not in parents),
            deepest=deepest,
            contexts=[
                ContextStats(
                    digest=digest,
                    model=context.model,
                    layout=context.layout.value,
                    state_mode=context.state_mode,
                    variant=context.variant,
                    keys=per_context[digest],
                )
                for digest, context in contexts.items()
            ],
            authors=[
                AuthorStats(source=source, author=author, entries=count)
                for (source, author), count in sorted(authors.items())
            ],
            first=min(times, default=None),
            last=max(times, default=None),
            unread=len(world.problems) + len(world.tails()),
        )


def verify_world(path: str | Path, limits: WorldLimits | None = None) -> WorldVerification:
    """Check a world: every line (digest, key, form), torn lines, conflicts, contexts.

    A conflict is one key with two different answers (``ANSWER_FIELDS``); a missing
    context is one that entries reference and the world does not hold. Verify a world no
    one is writing to (a line being written looks torn).

    Raises:
        UsageError: not a world, or beyond ``limits``.
    """

    @dataclass
    class Seen:
        file: str
        line: int
        created: datetime
        author: str

    @dataclass
    class Missing:
        file: str
        line: int
        count: int = 0

    with World.open(path, writable=False, limits=limits) as world:
        contexts = world.contexts()
        answers: dict[str, dict[str, Seen]] = {}
        missing: dict[str, Missing] = {}
        lines = 0
        for record in world.records():
            lines += 1
            entry = record.entry
            seen = Seen(record.file, record.line, entry.created, entry.author)
            answers.setdefault(entry.key, {}).setdefault(entry.answer_digest(), seen)
            if entry.context_digest not in contexts:
                missing.setdefault(entry.context_digest, Missing(record.file, record.line))
                missing[entry.context_digest].count += 1
        problems = [*world.problems, *world.tails()]
        for key, found in answers.items():
            if len(found) < 2:
                continue
            ordered = sorted(found.values(), key=lambda s: s.created)
            listed = "; ".join(
                f"{s.file}:{s.line} ({s.created.isoformat()}, {s.author})" for s in ordered
            )
            problems.append(
                WorldProblem(
                    kind=ProblemKind.CONFLICT,
                    file=ordered[0].file,
                    line=ordered[0].line,
                    detail=f"key {key[:16]}... has {len(found)} different answers: {listed}; "
                    "the first is used",
                )
            )
        for digest, where in missing.items():
            problems.append(
                WorldProblem(
                    kind=ProblemKind.MISSING_CONTEXT,
                    file=where.file,
                    line=where.line,
                    detail=f"{where.count} entries reference context {digest[:16]}..., which "
                    f"the world's {CONTEXTS_FILE} does not hold",
                )
            )
        return WorldVerification(
            path=str(world.path),
            digest=world.digest(),
            entries=lines,
            keys=len(world.keys()),
            contexts=len(contexts),
            problems=problems,
        )


@dataclass
class _Copy:
    """The distinct entry lines and contexts of several worlds, counted as they are read."""

    limit: int
    entries: int = 0
    duplicates: int = 0
    unread: int = 0
    digests: set[str] = field(default_factory=set)
    answers: dict[str, set[str]] = field(default_factory=dict)

    def lines(self, worlds: Sequence[World]) -> Iterator[bytes]:
        for world in worlds:
            self.unread += len(world.problems) + len(world.tails())
            for record in world.records():
                entry = record.entry
                if entry.digest in self.digests:
                    self.duplicates += 1
                    continue
                self.entries += 1
                if self.entries > self.limit:
                    raise UsageError(
                        f"the worlds hold more than {self.limit} entries together, the limit"
                    )
                self.digests.add(entry.digest)
                self.answers.setdefault(entry.key, set()).add(entry.answer_digest())
                yield record.data + b"\n"

    @property
    def conflicts(self) -> int:
        return sum(1 for found in self.answers.values() if len(found) > 1)


def _context_lines(worlds: Sequence[World]) -> list[bytes]:
    contexts: dict[str, WorldContext] = {}
    for world in worlds:
        for digest, context in world.contexts().items():
            contexts.setdefault(digest, context)
    return [
        canonical_json(contexts[d].model_dump(mode="json", exclude_none=True)).encode() + b"\n"
        for d in sorted(contexts)
    ]


def _new_target(out: Path) -> None:
    if out.exists() or out.is_symlink():
        raise UsageError(f"{out} exists already: choose a new name")


def _write_folder(
    out: Path, manifest: WorldManifest, worlds: Sequence[World], limits: WorldLimits
) -> _Copy:
    """Write a world folder from worlds' contexts and distinct entries (whole or not at all)."""
    _new_target(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(dir=out.parent, prefix=f".{out.name}."))
    copy = _Copy(limit=limits.entries)
    try:
        (building / MANIFEST_FILE).write_text(manifest.model_dump_json(indent=2) + "\n")
        (building / CONTEXTS_FILE).write_bytes(b"".join(_context_lines(worlds)))
        (building / SEGMENTS_DIR).mkdir()
        (building / LOCKS_DIR).mkdir()
        with (building / SEGMENTS_DIR / MERGED_SEGMENT).open("wb") as segment:
            for line in copy.lines(worlds):
                segment.write(line)
            segment.flush()
            os.fsync(segment.fileno())
        building.chmod(0o755)
        _new_target(out)
        building.rename(out)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return copy


def merge_worlds(
    sources: Sequence[str | Path],
    out: str | Path,
    *,
    description: str | None = None,
    limits: WorldLimits | None = None,
) -> WrittenWorld:
    """Merge worlds (folders or packed) into a new world folder.

    Every distinct entry is kept, in the order of ``sources``; an entry written twice
    (an equal digest) once. Two entries of one key with different answers are both kept:
    a lookup gives the first by ``created``, and ``verify_world`` lists them as a conflict.

    Raises:
        UsageError: fewer than one source, a source that is not a world, ``out`` exists,
            or beyond ``limits``.
    """
    limits = limits or WorldLimits()
    out = Path(out)
    if not sources:
        raise UsageError("name at least one world to merge")
    with ExitStack() as stack:
        worlds = [
            stack.enter_context(World.open(source, writable=False, limits=limits))
            for source in sources
        ]
        names = ", ".join(str(w.path) for w in worlds)
        manifest = WorldManifest(
            created=datetime.now(UTC),
            description=f"merged from {names}" if description is None else description,
        )
        copy = _write_folder(out, manifest, worlds, limits)
        with World.open(out, writable=False, limits=limits) as written:
            digest, contexts = written.digest(), len(written.contexts())
    return WrittenWorld(
        out=str(out),
        packed=False,
        sources=[str(s) for s in sources],
        entries=copy.entries,
        duplicates=copy.duplicates,
        contexts=contexts,
        conflicts=copy.conflicts,
        unread=copy.unread,
        digest=digest,
    )


def export_world(
    source: str | Path, out: str | Path, *, limits: WorldLimits | None = None
) -> WrittenWorld:
    """A world folder packed into one file, or a packed world unpacked into a folder.

    The packed file holds the manifest, the contexts, one segment of every distinct
    entry and ``sha256sums.txt``; its digest equals the folder's.

    Raises:
        UsageError: ``source`` is not a world, ``out`` exists, or beyond ``limits``.
    """
    limits = limits or WorldLimits()
    out = Path(out)
    _new_target(out)
    with World.open(source, writable=False, limits=limits) as world:
        if world.packed:
            copy = _write_folder(out, world.manifest, [world], limits)
            sha256 = None
        else:
            copy = _Copy(limit=limits.entries)
            manifest = world.manifest.model_dump_json(indent=2).encode() + b"\n"
            sha256 = write_packed(
                out, manifest, _context_lines([world]), [(PACKED_SEGMENT, copy.lines([world]))]
            )
        packed = not world.packed
    with World.open(out, writable=False, limits=limits) as written:
        digest, contexts = written.digest(), len(written.contexts())
    return WrittenWorld(
        out=str(out),
        packed=packed,
        sources=[str(source)],
        entries=copy.entries,
        duplicates=copy.duplicates,
        contexts=contexts,
        conflicts=copy.conflicts,
        unread=copy.unread,
        digest=digest,
        sha256=sha256,
    )

"""Frozen worlds: simulator answers recorded by the path that led to them, and shared.

A world answers a recorded path without a simulator, so that many agents face the same
observations, a third party replays a run without paying for its simulator, and people
can author answers. ``World`` is the store (a folder of append-only segments that many
processes write at once, or one packed file); the key functions say what an answer is
recorded under; ``world_stats``, ``verify_world``, ``merge_worlds`` and ``export_world``
are the ``occubench world`` commands' work; ``shared_world`` opens a world once per process
for every sample of a run.
"""

from occubench.worlds._models import (
    ANSWER_FIELDS,
    RAW_ARGUMENTS,
    WORLD_FORMAT,
    EntrySource,
    ObservationSource,
    PathStep,
    Provenance,
    WorldConflicts,
    WorldContext,
    WorldEntry,
    WorldLimits,
    WorldManifest,
    WorldMode,
    canonical_arguments,
    canonical_json,
    entry_key,
    env_digest,
    text_digest,
)
from occubench.worlds._operations import (
    AuthorStats,
    ContextStats,
    WorldStats,
    WorldVerification,
    WrittenWorld,
    export_world,
    merge_worlds,
    verify_world,
    world_stats,
)
from occubench.worlds._read import ProblemKind, WorldProblem
from occubench.worlds._shared import (
    WORLD_METADATA,
    WorldInLog,
    close_shared_worlds,
    shared_world,
)
from occubench.worlds._store import Answer, EntryTooLarge, Record, World

__all__ = [
    "ANSWER_FIELDS",
    "RAW_ARGUMENTS",
    "WORLD_FORMAT",
    "WORLD_METADATA",
    "Answer",
    "AuthorStats",
    "ContextStats",
    "EntrySource",
    "EntryTooLarge",
    "ObservationSource",
    "PathStep",
    "Provenance",
    "ProblemKind",
    "Record",
    "World",
    "WorldConflicts",
    "WorldContext",
    "WorldEntry",
    "WorldInLog",
    "WorldLimits",
    "WorldManifest",
    "WorldMode",
    "WorldProblem",
    "WorldStats",
    "WorldVerification",
    "WrittenWorld",
    "canonical_arguments",
    "canonical_json",
    "close_shared_worlds",
    "entry_key",
    "env_digest",
    "export_world",
    "merge_worlds",
    "shared_world",
    "text_digest",
    "verify_world",
    "world_stats",
]

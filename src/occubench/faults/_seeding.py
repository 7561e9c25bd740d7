"""The one seeded derivation of every random choice the fault layer makes.

Each choice (a plan's placement and kinds, a family's events, the details of one
call's fault) draws from a ``random.Random`` seeded by a SHA-256 of the canonical JSON
of its scope and fields, so the same run configuration injects the same faults on any
machine and in any Python process (no ``hash()``, no process state).
"""

from __future__ import annotations

import hashlib
import json
import random


def seeded_rng(scope: str, **fields: object) -> random.Random:
    """A random generator that depends only on ``scope`` and ``fields``.

    ``scope`` names what the draws are for and its version (for example
    ``occubench-fault-plan-v1``); bump the version when the draws' use changes, so that
    a changed algorithm never passes for the old one.
    """
    canonical = json.dumps(
        {"scheme": scope, **fields}, sort_keys=True, separators=(",", ":"), default=str
    )
    digest = hashlib.sha256(canonical.encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))

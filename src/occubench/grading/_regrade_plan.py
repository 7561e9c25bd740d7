"""What ``occubench regrade`` is given: a protocol's verifier layout, the new logs' folder."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from occubench.config import PRESETS
from occubench.grading._regrade import VerifierLayout
from occubench.protocols import Protocol


def protocol_layout(protocol: Protocol) -> VerifierLayout:
    """The verifier layout of ``protocol``'s preset (its messages and max_tokens)."""
    points = PRESETS[protocol]
    return VerifierLayout(
        style=points.verifier_messages, max_tokens=points.verifier_max_tokens or None
    )


def default_regrade_dir(first: str, settings: Sequence[object]) -> Path:
    """``<first log folder>-regraded-<hash of the settings>``, beside that folder."""
    path = Path(first.rstrip("/"))
    folder = path.parent if path.suffix in (".eval", ".json") else path
    digest = hashlib.sha256(json.dumps(list(settings), default=str).encode()).hexdigest()[:8]
    return folder.with_name(f"{folder.resolve().name}-regraded-{digest}")

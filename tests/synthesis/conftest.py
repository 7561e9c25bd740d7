"""The synthesis pipeline run once over three scenarios that cover every branch of the funnel."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from occubench.synthesis import Manifest, run_synthesis
from synthesis.world import DOCK, PHISHING, SETTINGS, TRIAGE, World, scenarios


@dataclass
class Synthesized:
    out: Path
    world: World
    manifest: Manifest


@pytest.fixture(scope="module")
def synthesized(tmp_path_factory) -> Synthesized:
    """The pipeline run once over three scenarios that cover every branch of the funnel."""
    out = tmp_path_factory.mktemp("synth")
    world = World()
    manifest = run_synthesis(scenarios(TRIAGE, DOCK, PHISHING), world.models(), out, SETTINGS)
    return Synthesized(out, world, manifest)

"""What ``occubench synth`` synthesizes: the catalog's scenarios chosen and the models named."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from inspect_ai.model import GenerateConfig

from occubench.calls import named_model
from occubench.defaults import DEFAULT_MAX_CONNECTIONS
from occubench.synthesis._catalog import CatalogScenario, load_catalog
from occubench.synthesis._pipeline import SynthesisModels


def catalog_scenarios(
    catalog: Path | None = None, names: Sequence[str] | None = None
) -> list[CatalogScenario]:
    """The scenarios named (all without ``names``) of ``catalog``, else of the built-in one.

    Raises:
        CatalogError: the catalog file does not load.
    """
    loaded = load_catalog(catalog, builtin=False) if catalog else load_catalog()
    return loaded.select(names=names)


def synthesis_models(
    generator: str,
    agent: str,
    simulator: str,
    verifier: str | None = None,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
) -> SynthesisModels:
    """The models of each role by name, unreadable answers retried at the call."""
    config = GenerateConfig(max_connections=max_connections)
    return SynthesisModels(
        generator=named_model(generator, config),
        agent=named_model(agent, config),
        simulator=named_model(simulator, config),
        verifier=named_model(verifier, config) if verifier else None,
    )

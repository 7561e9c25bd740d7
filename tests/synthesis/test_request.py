"""What ``occubench synth`` synthesizes: scenarios chosen from a catalog, models by name."""

from __future__ import annotations

from pathlib import Path

from occubench.synthesis import catalog_scenarios, load_catalog, synthesis_models

CATALOG = """\
version: 1
scenarios:
  - name: Roster Upkeep
    industry: Technology & IT
    domain: Site Reliability Engineering
    role: Site Reliability Engineer
    description: Keeps the paging roster complete.
  - name: Hive Inspections
    industry: Agriculture & Environment
    domain: Apiculture
    role: Apiary Manager
    description: Plans hive inspections around the weather.
"""


def test_the_named_scenarios_of_a_users_catalog_alone(tmp_path: Path) -> None:
    user = tmp_path / "mine.yaml"
    user.write_text(CATALOG, encoding="utf-8")
    chosen = catalog_scenarios(user, ["Hive Inspections"])
    assert [s.name for s in chosen] == ["Hive Inspections"]
    assert len(catalog_scenarios(user)) == 2


def test_without_a_catalog_the_builtin_one() -> None:
    assert catalog_scenarios() == load_catalog().scenarios


def test_the_models_of_each_role_and_the_simulator_as_the_judge_by_default() -> None:
    models = synthesis_models("mockllm/gen", "mockllm/agent", "mockllm/sim", max_connections=3)
    assert models.names() == {
        "generator": "mockllm/gen",
        "agent": "mockllm/agent",
        "simulator": "mockllm/sim",
        "verifier": "mockllm/sim",
    }
    assert models.generator.config.max_connections == 3
    judged = synthesis_models("mockllm/gen", "mockllm/agent", "mockllm/sim", "mockllm/judge")
    assert judged.names()["verifier"] == "mockllm/judge"

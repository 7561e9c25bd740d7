"""The paper's models by name: the published table's Inspect names, the shipped sweeps'."""

from __future__ import annotations

import pytest
from inspect_ai.model import get_model

from occubench.published import PAPER, Metric, load_published
from occubench.scale import load_sweep, load_sweeps

GEMINI_FLASH = "Gemini-3-Flash-Preview"
"""The paper's simulator and verifier wherever a table names no other."""


def sweep_models(name):
    sweep = load_sweep(name)
    return (
        [a.model for a in sweep.agents],
        [s.model for s in sweep.simulators],
        [v.model if v else None for v in sweep.verifiers],
    )


def test_every_name_the_table_uses_has_its_inspect_model():
    table = load_published(PAPER)
    named = {r.model for r in table.agents()} | {r.simulator for r in table.rows}
    named |= {r.verifier for r in table.rows} | {m for r in table.rows for m in r.averages}
    named |= {s for a in table.agreements for s in a.simulators}
    assert named == set(table.models)
    assert len(set(table.models.values())) == len(table.models)  # one model, one name


def test_the_shipped_sweeps_run_the_papers_agents_by_the_tables_names():
    table = load_published(PAPER)
    inspect = table.inspect_model
    judge = [inspect(GEMINI_FLASH)]
    agents = list(dict.fromkeys(inspect(r.model) for r in table.agents()))
    assert len(agents) == 15
    assert sweep_models("paper-main") == (agents, judge, judge)
    robust = [inspect(r.model) for r in table.agents() if r.value(Metric.R)]
    assert sweep_models("paper-robustness") == (robust, judge, judge)
    faulted = [inspect(r.model) for r in table.agents() if any(v.fault_count for v in r.values)]
    assert sweep_models("paper-fault-count") == (faulted, judge, judge)
    assert sweep_models("paper-fault-duration") == (faulted, judge, judge)
    effort = load_sweep("paper-reasoning-effort")
    assert [(a.model, a.generate.reasoning_effort) for a in effort.agents] == [
        (inspect(r.model), r.reasoning_effort) for r in table.agents() if r.reasoning_effort
    ]
    table4 = [r for r in table.rows if r.model == "Average of Table 4's 8 agents"]
    cross = sweep_models("paper-cross-simulator")
    assert cross[0] == [inspect(m) for m in table4[0].averages]
    assert cross[1:] == ([inspect(r.simulator) for r in table4 if r.simulator], judge)


def test_every_model_of_the_shipped_sweeps_is_an_inspect_provider(monkeypatch):
    """Each name builds its Inspect model (provider registered, key read); nothing is sent."""
    names = set()
    for sweep in load_sweeps(["paper-*"]):
        names |= {a.model for a in sweep.agents} | {s.model for s in sweep.simulators}
        names |= {v.model for v in sweep.verifiers if v is not None}
    for name in sorted(names):
        provider, _, rest = name.partition("/")
        # openai-api/<service>/<model> reads <SERVICE>_API_KEY and <SERVICE>_BASE_URL
        service = rest.partition("/")[0] if provider == "openai-api" else provider
        monkeypatch.setenv(f"{service.upper()}_API_KEY", "offline-test-key")
        monkeypatch.setenv(f"{service.upper()}_BASE_URL", "http://127.0.0.1:9/v1")
        model = get_model(name)
        assert model.api.model_name == rest, name
    assert {n.partition("/")[0] for n in names} == {
        "anthropic",
        "deepseek",
        "google",
        "moonshot",
        "openai",
        "openai-api",
    }


def test_an_unknown_provider_is_refused_by_inspect():
    with pytest.raises(ValueError, match="placeholder"):
        get_model("placeholder/agent-01")

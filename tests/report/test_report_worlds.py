"""A report over two agents run on one world: hit rates, shared paths, each step's source."""

from inspect_ai.model import get_model

from conftest import run_task
from occubench.report import build_report, render_html, report_tables
from occubench.results import read_runs, read_trajectories
from occubench.worlds import close_shared_worlds


def test_a_report_says_where_observations_came_from_and_what_agents_shared(tmp_path):
    world = str(tmp_path / "world")
    for name, agent in (("a", "occubench/careful"), ("b", "occubench/trusting")):
        run_task(
            tmp_path / name,
            agent=get_model(agent, memoize=False),
            roles={"simulator": "occubench/noisy", "verifier": "occubench/scripted-judge"},
            dataset="reference",
            world=world,
            task_ids=[1001, 1002],
            with_plan=True,
            simulator_seed=3,
        )
    close_shared_worlds()
    rows = read_runs([str(tmp_path / "a"), str(tmp_path / "b")])
    assert all(r.world == world for r in rows)
    first = [r for r in rows if r.agent_model == "occubench/careful"]
    assert sum(r.world_hits for r in first) == 0 and sum(r.simulator_calls for r in first) > 0
    report = build_report(rows)
    by_agent = {w.group: w for w in report.world_use if w.dimension == "agent"}
    assert by_agent["occubench/careful"].hit_rate == 0.0
    later = by_agent["occubench/trusting"]
    assert later.world_hits == sum(r.world_hits for r in rows)
    shared = {p.agent: p for p in report.shared_paths}
    assert set(shared) == {"occubench/careful", "occubench/trusting"}
    assert shared["occubench/trusting"].shared == later.world_hits
    titles = [t.title for t in report_tables(report)]
    assert any(t.startswith("Worlds:") for t in titles)
    assert any(t.startswith("Shared paths:") for t in titles)
    trajectories = read_trajectories(rows)
    sources = {t.source for tr in trajectories for t in tr.turns if t.role == "tool"}
    assert {"simulator", "world"} <= sources and later.world_hits > 0
    page = render_html(report, rows, trajectories, {})
    assert 'id="worlds-table"' in page and "from the simulator" in page

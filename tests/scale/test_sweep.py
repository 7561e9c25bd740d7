"""Sweep files: validation, expansion to runs and shards, overrides, shipped sweeps."""

import pytest
import yaml
from pydantic import ValidationError

from conftest import RELEASE_DIR, RELEASE_IDS
from occubench.roles import Role
from occubench.scale import (
    MAX_SWEEP_BYTES,
    MAX_SWEEP_DEPTH,
    MAX_SWEEP_RUNS,
    MAX_SWEEP_VALUES,
    expand_sweep,
    load_sweep,
    load_sweeps,
    override,
    placeholders,
    shipped_sweeps,
    sweep_runs,
    sweep_shards,
)

GRID = {
    "name": "grid",
    "dataset": str(RELEASE_DIR),
    "task_ids": "11,24,26",
    "agents": [
        "occubench/schema-agent",
        {
            "model": "occubench/careful",
            "generate": {"reasoning_effort": "high"},
            "resources": {"node:a": 0.01},
        },
    ],
    "simulators": ["occubench/echo-simulator"],
    "verifiers": [None, "occubench/scripted-judge"],
    "grid": {
        "env_mode": ["E0", "E3"],
        "fault_count": [1, 2],
        "fault_duration": [2],
        "seed": [0, 7],
    },
    "shards": 2,
}


def write(tmp_path, data, name="sweep.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def test_grid_expands_to_runs_then_shards(tmp_path):
    sweep = load_sweep(write(tmp_path, {**GRID, "log_dir": str(tmp_path / "logs")}))
    runs = expand_sweep(sweep)
    # 2 agents x 1 simulator x 2 verifiers x (E0 once + E3 x 2 fault counts x 2 seeds)
    assert len(runs) == 2 * 2 * (1 + 2 * 2)
    first = runs[0]
    assert first.name == "occubench_schema-agent__occubench_echo-simulator__E0"
    assert first.log_dir == f"{tmp_path}/logs/{first.name}-{first.key()}"
    assert first.roles == {"simulator": "occubench/echo-simulator"}
    assert first.config.env_mode == "E0" and first.config.task_ids == [11, 24, 26]
    e3 = [r for r in runs if r.config.env_mode == "E3"]
    assert sorted({(r.config.fault_count, r.config.seed) for r in e3}) == [
        (1, 0),
        (1, 7),
        (2, 0),
        (2, 7),
    ]
    careful = [r for r in runs if r.agent == "occubench/careful"]
    assert {r.agent_label for r in careful} == {"occubench/careful[reasoning_effort=high]"}
    assert all(
        r.model_dump()["generate"] == {Role.AGENT: {"reasoning_effort": "high"}} for r in careful
    )
    assert all(r.resources == {"node:a": 0.01} for r in careful)
    assert len({r.log_dir for r in runs}) == len(runs)

    planned = sweep_runs([sweep])
    shards = sweep_shards(planned)
    assert len(shards) == 2 * len(runs)
    assert [(s.index, s.count, s.task_ids) for s in shards[:2]] == [(1, 2, [11, 26]), (2, 2, [24])]
    assert shards[1].log_dir == f"{first.log_dir}/shard-2-of-2"
    assert (
        expand_sweep(load_sweep(write(tmp_path, {**GRID, "log_dir": str(tmp_path / "logs")})))
        == runs
    )  # the same file, the same runs (resume)


@pytest.mark.parametrize("name", ["reference", "conversational"])
def test_a_built_in_dataset_keeps_its_name(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)  # a folder of that name here would not be what it means
    data = {**GRID, "dataset": name, "task_ids": None, "grid": {"env_mode": ["E0"]}}
    runs = expand_sweep(load_sweep(write(tmp_path, data)))
    assert {r.config.dataset for r in runs} == {name}


def test_runs_shared_by_sweeps_run_once(tmp_path):
    main = load_sweep(write(tmp_path, {**GRID, "grid": {"env_mode": ["E0"]}}, "a.yaml"))
    robust = load_sweep(write(tmp_path, {**GRID, "name": "other"}, "b.yaml"))
    assert len(sweep_runs([main, robust])) == len(expand_sweep(robust))


def test_bad_sweeps_are_clear_errors(tmp_path):
    with pytest.raises(ValidationError, match="reasoning_effort"):
        load_sweep(
            write(
                tmp_path,
                {**GRID, "agents": [{"model": "m/a", "generate": {"reasoning_effort": "hgih"}}]},
            )
        )
    with pytest.raises(ValidationError, match="env_mode"):
        load_sweep(write(tmp_path, {**GRID, "grid": {"env_mode": ["E9"]}}))
    with pytest.raises(ValidationError, match="agents must differ"):
        load_sweep(write(tmp_path, {**GRID, "agents": ["m/a", "m/a"]}))
    with pytest.raises(ValidationError, match="seed"):  # a typo is not silently ignored
        load_sweep(write(tmp_path, {**GRID, "seeds": 3}))
    with pytest.raises(FileNotFoundError, match="paper-main"):
        load_sweep("no-such-sweep")
    broken = tmp_path / "broken.yaml"
    broken.write_text("agents: [1")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_sweep(broken)


SHIPPED = {
    "paper-main": 15,
    "paper-robustness": 36,
    "paper-fault-count": 8,
    "paper-fault-duration": 8,
    "paper-reasoning-effort": 9,
    "paper-cross-simulator": 24,
}


def test_shipped_paper_sweeps_expand_to_the_paper_grid():
    assert set(shipped_sweeps()) >= set(SHIPPED)
    sweeps = load_sweeps(["paper-*"])
    assert {s.name: len(expand_sweep(s)) for s in sweeps} == SHIPPED
    # shared runs count once: robustness holds main's E0 runs of its 9 agents and the
    # ablations' fc=2, fd=2 E3 runs; cross-simulator's Gemini runs are main's
    assert len(sweep_runs(sweeps)) == 15 + 27 + 6 + 6 + 9 + 16
    robust = next(s for s in sweeps if s.name == "paper-robustness")
    assert robust.grid["env_mode"] == ["E0", "E1", "E2", "E3"]
    assert not any(placeholders(s) for s in sweeps)  # the paper's models, ready to run


def test_override_names_the_users_models_and_keeps_variants():
    effort = override(
        load_sweep("paper-reasoning-effort"),
        agents=["openai/a", "openai/b"],
        simulators=["google/s"],
    )
    assert len(effort.agents) == 12 and not placeholders(effort)
    assert sorted({a.generate.reasoning_effort for a in effort.agents}) == [
        "high",
        "low",
        "max",
        "medium",
        "none",
        "xhigh",
    ]
    main = override(
        load_sweep("paper-main"),
        agents=["openai/a"],
        simulators=["google/s"],
        dataset=str(RELEASE_DIR),
    )
    [run] = expand_sweep(main)
    assert run.agent == "openai/a"
    assert run.roles == {"simulator": "google/s", "verifier": "google/gemini-3-flash-preview"}
    assert [s.task_ids for s in sweep_shards([(run, 1)])] == [sorted(RELEASE_IDS)]


def test_shipped_paper_sweeps_follow_the_paper_protocol_at_high_effort():
    for sweep in load_sweeps(["paper-*"]):
        runs = expand_sweep(override(sweep, agents=["openai/a"], simulators=["google/s"]))
        assert all(r.config.protocol == "paper" for r in runs)
        efforts = {r.generate_config(Role.AGENT).reasoning_effort for r in runs}
        if sweep.name == "paper-reasoning-effort":
            assert efforts == {"none", "low", "medium", "high", "xhigh", "max"}
        else:
            assert efforts == {"high"}


LAUGHS = """\
name: laughs
agents: [m/a]
simulators: [m/s]
agent_args:
  l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]
"""
"""Alias expansion: each level repeats the one before ten times (ten levels: 10**10 values)."""


def laughs(levels):
    lines = [LAUGHS]
    for i in range(1, levels):
        lines.append(f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]\n")
    return "".join(lines)


def test_alias_expansion_is_counted_before_any_object_is_built(tmp_path):
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(laughs(10))
    assert bomb.stat().st_size < 2_000
    with pytest.raises(ValueError, match=r"bomb\.yaml, line 9 \(agent_args\.l4\[\d+\]\): more"):
        load_sweep(bomb)
    with pytest.raises(ValueError, match=f"more than {MAX_SWEEP_VALUES} YAML values"):
        load_sweep(bomb)
    # anchors within the bound are fine: a sweep may repeat a block by alias
    fine = tmp_path / "fine.yaml"
    fine.write_text(laughs(3))
    assert len(load_sweep(fine).agent_args["l2"]) == 10
    shared = tmp_path / "shared.yaml"
    shared.write_text(
        "name: shared\nagents:\n  - {model: m/a, generate: &g {temperature: 0}}\n"
        "  - {model: m/b, generate: *g}\nsimulators: [m/s]\n"
    )
    given = [a.generate.model_dump(exclude_unset=True) for a in load_sweep(shared).agents]
    assert given == [{"temperature": 0}] * 2


def test_a_cycle_a_deep_nesting_or_a_large_file_is_refused(tmp_path):
    cycle = tmp_path / "cycle.yaml"
    cycle.write_text("name: c\nagents: [m/a]\nsimulators: [m/s]\nagent_args: {k: &a [1, *a]}\n")
    with pytest.raises(ValueError, match=r"line 4 \(agent_args\.k\[1\]\): alias \*a refers"):
        load_sweep(cycle)
    deep = tmp_path / "deep.yaml"
    deep.write_text("name: d\nagents: " + "[" * 100_000)  # deeper than Python's stack
    with pytest.raises(ValueError, match=f"line 2 .*nested deeper than {MAX_SWEEP_DEPTH} levels"):
        load_sweep(deep)
    keys = tmp_path / "keys.yaml"  # mappings as keys nest too
    keys.write_text("name: k\nagents: " + "{" * 50 + "a: 1" + "}" * 50 + "\n")
    with pytest.raises(ValueError, match="nested deeper"):
        load_sweep(keys)
    big = tmp_path / "big.yaml"
    big.write_text(yaml.safe_dump(GRID) + "#" * MAX_SWEEP_BYTES)
    with pytest.raises(ValueError, match=f"big.yaml: larger than {MAX_SWEEP_BYTES} bytes"):
        load_sweep(big)
    control = tmp_path / "control.yaml"
    control.write_text("name: x\ndescription: a\x00b\n")
    with pytest.raises(
        ValueError, match=r"control\.yaml, line 2: not valid YAML: character #x0000"
    ):
        load_sweep(control)


def test_the_grid_is_sized_before_it_is_expanded(tmp_path):
    axes = {"seed": 30, "fault_count": 10, "fault_duration": 10, "max_turns": 100, "votes": 100}
    grid = {axis: list(range(1, n + 1)) for axis, n in axes.items()}
    huge = write(tmp_path, {**GRID, "grid": {"env_mode": ["E3"], **grid}})
    with pytest.raises(ValidationError, match=r"sweep grid is 120,000,000 runs \(agents 2 x "):
        load_sweep(huge)  # 2 agents x 2 verifiers x 30,000,000 points; expanding them is GBs
    with pytest.raises(ValidationError, match=f"at most {MAX_SWEEP_RUNS:,} runs"):
        load_sweep(huge)
    at_bound = {"seed": list(range(25)), "max_turns": list(range(1, 101))}
    sweep = load_sweep(write(tmp_path, {**GRID, "grid": {"env_mode": ["E3"], **at_bound}}))
    assert len(sweep.configs()) * 4 == MAX_SWEEP_RUNS
    with pytest.raises(ValidationError, match="is 20,000 runs"):  # more agents: over again
        override(sweep, agents=["m/a", "m/b"])  # x 2 generate variants


def test_generation_settings_are_typed_and_written_as_given(tmp_path):
    agent = {"model": "m/a", "generate": {"reasoning_effort": "high", "temperature": 0.5}}
    data = {
        **GRID,
        "agents": [agent],
        "agent_generate": {"top_p": 0.9, "temperature": 1.0},
        "simulators": [{"model": "m/s", "generate": {"temperature": 0.0}}],
        "verifiers": [None],
        "grid": {},
    }
    sweep = load_sweep(write(tmp_path, data))
    assert sweep.model_dump(mode="json")["agents"][0]["generate"] == agent["generate"]
    (run,) = expand_sweep(sweep)
    config = run.generate_config(Role.AGENT)  # the validated GenerateConfig, merged
    assert (config.reasoning_effort, config.temperature, config.top_p) == ("high", 0.5, 0.9)
    assert run.generate_config(Role.SIMULATOR).temperature == 0.0
    assert run.model_dump(mode="json")["generate"] == {  # the fields given, nothing else
        "agent": {"top_p": 0.9, "temperature": 0.5, "reasoning_effort": "high"},
        "simulator": {"temperature": 0.0},
    }
    assert type(run).model_validate_json(run.model_dump_json()) == run  # as a worker reads it
    unknown = {**data, "agents": [{"model": "m/a", "generate": {"temprature": 1}}]}
    with pytest.raises(ValidationError, match="unknown generation settings: temprature"):
        load_sweep(write(tmp_path, unknown))

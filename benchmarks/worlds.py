"""Simulator calls with and without a shared world, and a replay of it.

The reference suite (10 tasks), the three reference agents (careful, no-retry,
trusting: the plan followed, with its solution given), E0 and E3 (code-placed faults),
and a stochastic scripted simulator (``occubench/noisy``: a seeded share of its answers
is a transient error, decided by the seed and the conversation). For each mode:

1. without a world: the simulator calls each agent's run makes;
2. with one world the three agents share, run one after the other: each run's calls
   and hit rate (the first records, the others answer the paths it took from it);
3. the same three runs again with ``--world-mode replay``: the simulator calls (none),
   and whether every verdict and every observation the agents saw is byte-for-byte the
   one of step 2.

    python benchmarks/worlds.py [--tasks 1001,1002]

Simulator calls are the simulator's model events in the logs (re-asks included).
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log
from inspect_ai.model import ChatMessageTool

from occubench.config import EvalOptions, RunConfig
from occubench.results import read_runs
from occubench.roles import Role
from occubench.scale import EvalOutcome, run_eval

AGENTS = ("careful", "no-retry", "trusting")
SIMULATOR = "occubench/noisy"
JUDGE = "occubench/scripted-judge"


def run_agent(log_dir: Path, agent: str, config: RunConfig, epochs: int = 1) -> EvalOutcome:
    """Run one scripted agent against the noisy simulator and the scripted verifier."""
    return run_eval(
        "occubench/occubench",
        config.task_args(),
        log_dir=str(log_dir),
        model=f"occubench/{agent}",
        roles={Role.SIMULATOR: SIMULATOR, Role.VERIFIER: JUDGE},
        options=EvalOptions(),
        epochs=epochs,
    )


def one_run(log_dir: Path, agent: str, config: RunConfig) -> tuple[int, dict, dict, list]:
    """Run one agent; its simulator calls, verdicts, observations and rows."""
    outcome = run_agent(log_dir, agent, config)
    calls, verdicts, seen = 0, {}, {}
    for location in outcome.logs:
        log = read_eval_log(location)
        for sample in log.samples or []:
            calls += sum(
                isinstance(e, ModelEvent) and e.role == Role.SIMULATOR.value for e in sample.events
            )
            key = (sample.id, sample.epoch)
            verdicts[key] = {k: s.value for k, s in (sample.scores or {}).items()}
            seen[key] = [m.text for m in sample.messages if isinstance(m, ChatMessageTool)]
    return calls, verdicts, seen, read_runs(outcome.logs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", default=None, help="task ids (default: all 10)")
    parser.add_argument("--simulator-seed", type=int, default=1)
    opts = parser.parse_args()
    tasks = [int(t) for t in opts.tasks.split(",")] if opts.tasks else None
    work = Path(tempfile.mkdtemp(prefix="occubench-worlds-"))
    for mode in ("E0", "E3"):
        base = dict(
            dataset="reference",
            task_ids=tasks,
            env_mode=mode,
            with_plan=True,
            protocol="occubench",
            simulator_seed=opts.simulator_seed,
            seed=7,
        )
        world = str(work / f"world-{mode}")
        print(f"== {mode} ({SIMULATOR}, simulator seed {opts.simulator_seed})")
        recorded = {}
        for agent in AGENTS:
            plain, *_ = one_run(work / mode / "plain" / agent, agent, RunConfig(**base))
            calls, verdicts, seen, rows = one_run(
                work / mode / "world" / agent, agent, RunConfig(**base, world=world)
            )
            recorded[agent] = (verdicts, seen)
            hits = sum(r.world_hits for r in rows)
            total = hits + sum(r.simulator_calls + r.live_calls for r in rows)
            print(
                f"{agent:9s} without a world: {plain:4d} simulator calls; with the shared "
                f"world: {calls:4d} calls, hit rate {100 * hits / max(total, 1):5.1f}% "
                f"({hits}/{total} observations)"
            )
        for agent in AGENTS:
            config = RunConfig(**base, world=world, world_mode="replay")
            calls, verdicts, seen, rows = one_run(work / mode / "replay" / agent, agent, config)
            same_verdicts = verdicts == recorded[agent][0]
            same_seen = seen == recorded[agent][1]
            errors = sum(r.error is not None for r in rows)
            print(
                f"{agent:9s} replay: {calls} simulator calls, {errors} errors, verdicts "
                f"identical: {same_verdicts}, observations identical byte for byte: {same_seen}"
            )
    print(f"logs and worlds in {work}")


if __name__ == "__main__":
    main()

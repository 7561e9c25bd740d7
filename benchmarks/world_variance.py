"""The simulator's share of a paired comparison, without a world and with one shared world.

The reference suite (10 tasks), the three reference agents (careful, no-retry, trusting:
the plan followed, with its solution given), K epochs, and the stochastic scripted
simulator ``occubench/noisy`` with a seed per epoch (``simulator_seed_by_epoch``), so that
each epoch is an independent simulator sample. Two designs of the same runs:

1. without a world: each agent draws its own simulator samples (its own seeds, as two
   runs against a sampling LLM would: the scripted simulator is a pure function of its
   seed and the conversation, so one seed for both would already share its answers);
2. with one shared world and ``--world-variant epoch``: every agent runs with the same
   seeds on one world, recorded by the first; in an epoch all agents see the same
   simulator sample on the paths they share.

For each pair of agents (A - B per task and epoch, ``report --variance``'s paired
differences) it prints the within-task variance of the difference (epoch to epoch: here
the simulator's sampling, the reference agents and the checks being deterministic), the
MDD of the difference, both ways, and their ratios (world / no world).

    python benchmarks/world_variance.py [--epochs 5] [--modes E0,E3] [--tasks 1001,1002]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from occubench.analysis import PairRow, variance_report
from occubench.config import RunConfig
from occubench.results import SampleRow, read_runs
from worlds import AGENTS, SIMULATOR, run_agent

SEED = 1
OWN_SEEDS = 100
"""Without a world, agent i's simulator seeds start at SEED + i x OWN_SEEDS."""


def one_run(log_dir: Path, agent: str, config: RunConfig, epochs: int) -> list[SampleRow]:
    """Run one agent for ``epochs`` epochs; its sample rows."""
    return read_runs(run_agent(log_dir, agent, config, epochs).logs)


def within(pair: PairRow) -> float:
    """The within-task variance of a pair's difference (0 when not identified)."""
    return next(c.variance or 0.0 for c in pair.components if c.level == "within")


def ratio(new: float, old: float) -> str:
    return "-" if old == 0 else f"{new / old:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", default=None, help="task ids (default: all 10)")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--modes", default="E0,E3")
    opts = parser.parse_args()
    tasks = [int(t) for t in opts.tasks.split(",")] if opts.tasks else None
    work = Path(tempfile.mkdtemp(prefix="occubench-world-variance-"))
    for mode in opts.modes.split(","):
        base = dict(
            dataset="reference",
            task_ids=tasks,
            env_mode=mode,
            with_plan=True,
            protocol="occubench",
            simulator_seed_by_epoch=True,
            seed=7,
        )
        started = time.perf_counter()
        apart: list[SampleRow] = []
        shared: list[SampleRow] = []
        world = str(work / f"world-{mode}")
        for index, agent in enumerate(AGENTS):
            own = RunConfig(**base, simulator_seed=SEED + index * OWN_SEEDS)
            apart += one_run(work / mode / "apart" / agent, agent, own, opts.epochs)
            one = RunConfig(**base, simulator_seed=SEED, world=world, world_variant="epoch")
            shared += one_run(work / mode / "world" / agent, agent, one, opts.epochs)
        hits = sum(r.world_hits for r in shared)
        calls = hits + sum(r.simulator_calls + r.live_calls for r in shared)
        print(
            f"== {mode}: {len(set(r.task_id for r in apart))} tasks x {opts.epochs} epochs, "
            f"{SIMULATOR} with a seed per epoch; shared world hit rate "
            f"{100 * hits / max(calls, 1):.1f}% ({hits}/{calls}); "
            f"{time.perf_counter() - started:.0f} s"
        )
        without = {(p.agent_a, p.agent_b): p for p in variance_report(apart).pairs}
        with_world = {(p.agent_a, p.agent_b): p for p in variance_report(shared).pairs}
        print(
            "| pair (A - B) | A - B pp, no world / world | within var, no world | with world "
            "| ratio | MDD pp, no world | with world | ratio |"
        )
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        for key, a in without.items():
            b = with_world[key]
            print(
                f"| {key[0]} - {key[1]} | {100 * a.difference:+.1f} / {100 * b.difference:+.1f} "
                f"| {within(a):.4f} | {within(b):.4f} | {ratio(within(b), within(a))} "
                f"| {100 * a.mdd:.1f} | {100 * b.mdd:.1f} | {ratio(b.mdd, a.mdd)} |"
            )
    print(f"logs and worlds in {work}")


if __name__ == "__main__":
    main()

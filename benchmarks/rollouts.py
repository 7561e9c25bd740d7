"""Rollouts at training scale: rollouts per minute, and the simulator calls a world saves.

The reference suite's ten tasks, ``--per-task`` rollouts each, played by the careful
reference agent (``occubench.training.run_rollouts``, the gym API) with up to
``--concurrency`` episodes at once, every model behind a local OpenAI-compatible server
(``occubench.testing``: the scripted agent, the canned simulator and the scripted judge,
each answering after ``--latency`` seconds, as a model endpoint does). Three batches in one
run:

1. no world: every observation is a simulator call;
2. a fresh world, ``record``: the first rollout on a path asks the simulator, the others
   (and concurrent ones on the same path, which wait for that one call) read the world;
3. the same world, ``replay``: the simulator is never asked (evaluation).

    python benchmarks/rollouts.py [--per-task 10] [--concurrency 100] [--latency 0.05]

The ratios (calls saved, speed-up over the batch without a world) are the result; the
absolute rates depend on the machine (the client's CPU bounds them: Inspect's work per
model call). The cost is at an illustrative price (``PRICES``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
from pathlib import Path

import rich

from occubench.costs import ModelPrice, PriceTable
from occubench.testing import ScriptedOpenAIServer
from occubench.training import EpisodeSource, RolloutReport, run_rollouts

AGENT = "openai-api/local/careful"
SIMULATOR = "openai-api/local/canned"
JUDGE = "openai-api/local/scripted-judge"
PRICES = PriceTable(
    models={
        m: ModelPrice(input_per_mtok=1.0, output_per_mtok=2.0) for m in (AGENT, SIMULATOR, JUDGE)
    }
)
"""An illustrative price ($1 in, $2 out per million tokens) to show the cost of a rollout."""


async def batch(world: str | None, mode: str, per_task: int, concurrency: int) -> RolloutReport:
    """One batch of rollouts of every reference task."""
    settings = {} if world is None else {"world": world, "world_mode": mode}
    source = EpisodeSource.of("reference", SIMULATOR, JUDGE, with_plan=True, **settings)
    return await run_rollouts(
        source, AGENT, per_task=per_task, concurrency=concurrency, prices=PRICES
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-task", type=int, default=10, help="rollouts of each task")
    parser.add_argument("--concurrency", type=int, default=100, help="episodes at once")
    parser.add_argument("--latency", type=float, default=0.05, help="seconds per model call")
    args = parser.parse_args()
    rich.get_console().quiet = True  # Inspect's banner, printed as the first model is built
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedOpenAIServer(latency=args.latency) as server:
        os.environ["LOCAL_BASE_URL"] = server.base_url
        os.environ["LOCAL_API_KEY"] = "bench-key"
        world = str(Path(tmp) / "world")
        for label, used, mode in (
            ("no world", None, "record"),
            ("world, record (fresh)", world, "record"),
            ("world, replay", world, "replay"),
        ):
            before = dict(server.stats.requests)
            report = asyncio.run(batch(used, mode, args.per_task, args.concurrency))
            asked = {m: n - before.get(m, 0) for m, n in server.stats.requests.items()}
            rows.append((label, report, asked))
        peak = server.stats.max_in_flight
    baseline = rows[0][1]
    print(
        f"{baseline.episodes} rollouts a batch (10 tasks x {args.per_task}), up to "
        f"{args.concurrency} at once; {args.latency} s a model call; peak requests in flight "
        f"at the server: {peak}\n"
    )
    print(
        "| batch | rollouts/min | speed-up | simulator calls | world hits | calls saved | "
        "simulator requests at the server | simulator calls a rollout | tokens a rollout | "
        "cost a rollout | mean reward | errors |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, report, asked in rows:
        per_minute = 60 * report.episodes / report.seconds
        speedup = baseline.seconds / report.seconds
        observations = report.simulator_calls + report.world_hits
        saved = report.world_hits / observations if observations else 0.0
        tokens = sum(report.tokens().values()) / report.episodes
        cost = (report.cost or 0.0) / report.episodes
        print(
            f"| {label} | {per_minute:,.0f} | {speedup:.2f}x | {report.simulator_calls} | "
            f"{report.world_hits} | {saved:.0%} | {asked.get('canned', 0)} | "
            f"{report.simulator_calls / report.episodes:.1f} | {tokens:,.0f} | ${cost:.4f} | "
            f"{report.mean_reward:.2f} | {report.errors} |"
        )


if __name__ == "__main__":
    main()

"""Prompt caching per wire: the simulator's input tokens read from cache, and the cost.

Runs ``occubench run`` (paper protocol, E0) on the public sample's tasks (real env prompts:
``$OCCUBENCH_SAMPLE`` or ``../shared/occubench-sample``) with every role on one
provider's own API, through its strict local server (``occubench.testing.WIRE_CASES``), whose
accounting follows the provider's caching rules (Anthropic: the ``cache_control``
breakpoints Inspect sets; OpenAI: automatic, keyed by the sample's ``prompt_cache_key``;
Gemini and DeepSeek: implicit). Prints, per wire, the simulator's input tokens and those
read from cache, then each role's cost per sample at the list prices below, without and
with caching (cache writes at the provider's write price). Caching changes the price,
never the content.

    python benchmarks/prompt_cache.py [--tasks 3] [--dataset DIR]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

from occubench.roles import Role
from occubench.testing import WIRE_CASES, WireCase, WireName

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path(os.environ.get("OCCUBENCH_SAMPLE", ROOT.parent / "shared" / "occubench-sample"))

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))


class Price(NamedTuple):
    """Dollars per million tokens: input, cache read, cache write, output."""

    input: float
    read: float
    write: float
    output: float


LIST_PRICES = {
    WireName.ANTHROPIC: Price(1.00, 0.10, 1.25, 5.00),
    WireName.GOOGLE: Price(0.50, 0.05, 0.50, 3.00),
    WireName.OPENAI_RESPONSES: Price(1.25, 0.125, 1.25, 10.00),
    WireName.DEEPSEEK_CHAT: Price(0.28, 0.028, 0.28, 0.42),
}
"""The simulator model's list prices per wire as the providers' pricing pages state them
when this was written (Claude Haiku 4.5; Gemini 3 Flash Preview; GPT-5; DeepSeek V3.2),
applied to every role for comparison: cache read 10% of input (Anthropic, OpenAI, Gemini,
DeepSeek), Anthropic's 5-minute cache write 125%."""


def dollars(price: Price, fresh: int, read: int, written: int, output: int) -> float:
    """The cost of these tokens (fresh input at the input price)."""
    return (
        fresh * price.input + read * price.read + written * price.write + output * price.output
    ) / 1e6


def measure(case: WireCase, dataset: Path, work: Path, tasks: int) -> list[str]:
    """One wire's rows."""
    server = case.server()
    with server:
        env = {**os.environ, **case.environment(server)}
        args = [OCCUBENCH, "run", *case.model_options(), *case.agent_settings,
                "--dataset", str(dataset), "--limit", str(tasks), "--workers", "1",
                "--display", "none", "--no-preflight",
                "--log-dir", str(work / case.wire.value)]  # fmt: skip
        run = subprocess.run(args, cwd=work, env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(run.stdout + run.stderr)
    stats, price, rows = server.stats, LIST_PRICES[case.wire], []
    for role in (Role.AGENT, Role.SIMULATOR, Role.VERIFIER):
        name = case.models[role].split("/")[-1]
        billed, output = stats.input_tokens[name], stats.output_tokens[name]
        read, written = stats.cache_read_tokens[name], stats.cache_write_tokens[name]
        without = dollars(price, billed, 0, 0, output) / tasks
        with_cache = dollars(price, billed - read - written, read, written, output) / tasks
        share = f"{100 * read / billed:.1f}%" if billed else "-"
        rows.append(
            f"| {case.wire.value} | {role.value} | {billed:,} | {read:,} ({share}) | "
            f"{written:,} | ${without:.6f} | ${with_cache:.6f} |"
        )
    return rows


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tasks", type=int, default=3)
    parser.add_argument("--dataset", type=Path, default=SAMPLE)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        work = Path(folder)
        dataset = args.dataset.resolve()
        print(f"the first {args.tasks} tasks of {dataset.name}, paper protocol, E0")
        print("| wire | role | input tokens | read from cache | written to cache "
              "| $/sample without caching | $/sample with caching |")  # fmt: skip
        print("|---|---|---|---|---|---|---|")
        for case in WIRE_CASES:
            for row in measure(case, dataset, work, args.tasks):
                print(row, flush=True)


if __name__ == "__main__":
    main()

"""Prompt caching where the wire offers it: the price changes, never the content.

On OpenAI's own API every call of a sample carries the sample's ``prompt_cache_key``
(one per task and epoch), so its growing prompts meet the cache that holds their prefix;
an OpenAI-compatible endpoint is sent none (a strict one may refuse a field it does not
know). Each strict local server accounts cache reads as its provider does: over a sample
of the public sample's first task, the simulator reads most of its input from cache on
every wire.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from occubench.roles import Role
from occubench.testing import WIRE_CASES, WireCase, WireName

OCCUBENCH = str(Path(sys.executable).with_name("occubench"))


def run_one(case: WireCase, dataset: Path, tmp_path: Path, record: bool = False):
    server = case.server(record=record)
    with server:
        env = {**os.environ, **case.environment(server)}
        args = [OCCUBENCH, "run", *case.model_options(), "--dataset", str(dataset),
                "--limit", "1", "--epochs", "2", "--workers", "1", "--display", "none",
                "--no-preflight", "--log-dir", str(tmp_path / "logs")]  # fmt: skip
        run = subprocess.run(args, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
    return server


def test_openai_calls_carry_the_samples_cache_key(public_sample, tmp_path):
    case = next(c for c in WIRE_CASES if c.wire is WireName.OPENAI_RESPONSES)
    server = run_one(case, public_sample, tmp_path, record=True)
    keys = {r.body.get("prompt_cache_key") for r in server.requests if r.body}
    assert len(keys) == 2 and all(str(k).startswith("occubench-") for k in keys)  # an epoch each


def test_a_compatible_endpoint_is_sent_no_cache_key(public_sample, tmp_path):
    case = next(c for c in WIRE_CASES if c.wire is WireName.DEEPSEEK_CHAT)
    server = run_one(case, public_sample, tmp_path, record=True)
    assert all("prompt_cache_key" not in (r.body or {}) for r in server.requests)


@pytest.mark.parametrize("case", WIRE_CASES, ids=[c.wire.value for c in WIRE_CASES])
def test_the_simulator_reads_most_of_its_prompt_from_cache(public_sample, tmp_path, case):
    server = run_one(case, public_sample, tmp_path)
    simulator = case.models[Role.SIMULATOR].split("/")[-1]
    billed, read = server.stats.input_tokens[simulator], server.stats.cache_read_tokens[simulator]
    assert server.stats.refused == []
    assert read > billed / 2, (read, billed)

"""Many processes write one world at once: one request per key, no entry torn or lost."""

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from occubench.worlds import World, verify_world, world_stats

WRITER = Path(__file__).with_name("world_writer.py")
PROCESSES = 4
KEYS = 48
SHARED = range(12)
"""Keys every process asks for; each other key is asked by two processes."""
STARTUP_LIMIT = 600
"""Seconds the writers may take to import and open the world (a failure, not a margin)."""


def keys_of(index: int) -> list[int]:
    mine = {k for k in range(KEYS) if k % PROCESSES in (index, (index + 1) % PROCESSES)}
    return sorted(mine | set(SHARED))


def wait_ready(ready: Path, procs: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + STARTUP_LIMIT
    while len(list(ready.iterdir())) < len(procs):
        dead = [p for p in procs if p.poll() is not None]
        assert not dead, [p.communicate() for p in dead]
        assert time.monotonic() < deadline, "the writers did not start"
        time.sleep(0.05)


def test_processes_writing_one_world_make_each_key_once(tmp_path):
    world_dir, calls = tmp_path / "world", tmp_path / "calls.txt"
    ready, go = tmp_path / "ready", tmp_path / "go"
    ready.mkdir()
    outs = [tmp_path / f"out-{i}.json" for i in range(PROCESSES)]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-I",
                str(WRITER),
                str(world_dir),
                str(calls),
                str(outs[i]),
                str(ready),
                str(go),
                ",".join(map(str, keys_of(i))),
            ],
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(PROCESSES)
    ]
    try:
        wait_ready(ready, procs)
        go.write_text("")
        outputs = [p.communicate(timeout=STARTUP_LIMIT)[0] for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0] * PROCESSES, outputs

    made = Counter(int(line.split()[1]) for line in calls.read_text().splitlines())
    assert made == Counter(range(KEYS))  # every key's make called exactly once in total

    answers = [row for out in outs for row in json.loads(out.read_text())]
    asked = sum(len(keys_of(i)) for i in range(PROCESSES)) * 3
    assert len(answers) == asked
    sources = Counter(source for _, _, source in answers)
    assert sources == {"simulator": KEYS, "world": asked - KEYS}
    seen = {number: set() for number in range(KEYS)}
    for number, digest, _ in answers:
        seen[number].add(digest)
    assert all(len(digests) == 1 for digests in seen.values())  # one answer per key for all

    stats = world_stats(world_dir)
    assert (stats.entries, stats.keys, stats.duplicates, stats.conflicts) == (KEYS, KEYS, 0, 0)
    assert stats.roots == 0 and stats.leaves == KEYS and stats.unread == 0
    assert 1 <= stats.segments <= PROCESSES
    found = verify_world(world_dir)
    assert found.clean, found.problems
    assert found.entries == KEYS and found.contexts == 1
    with World.open(world_dir, writable=False) as world:
        digests = {world.lookup(key).digest for key in world.keys()}
    assert digests == {d for ds in seen.values() for d in ds}
    assert sorted(p.name for p in (world_dir / "locks").iterdir()) == ["contexts.lock"]
    print(
        f"{PROCESSES} processes, {KEYS} keys, {asked} answers asked, {sum(made.values())} make "
        f"calls, {stats.entries} entries in {stats.segments} segments"
    )

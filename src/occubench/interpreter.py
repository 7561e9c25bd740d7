"""Interpreter settings of a long eval: garbage collection while it runs, a quick exit.

CPython's full collections scan every tracked object and stop the event loop while
they run, so every sample in flight waits. In a shard of 50 samples at 1000 ms
latency they came about every two seconds and took 0.2-0.5 s each (3.5 s of a 40 s
run), most of it rescanning what never becomes garbage: modules, classes, schemas,
the dataset. ``tuned_gc`` collects once, freezes what exists (CPython's permanent
generation: never scanned again) and raises the thresholds, so that full
collections become rare while the young generation still frees short-lived cycles.
Peak memory of that shard: 259 MB with the defaults, 270 MB tuned.

``exit_now`` ends a process whose work is saved without tearing the interpreter down
(freeing every module and object one by one): that took 1.2 s after a shard's eval.
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager

from occubench.defaults import DEFAULT_GC_THRESHOLDS

_tuned = 0
"""Depth of nested ``tuned_gc`` blocks: only the outermost one collects and freezes."""


@contextmanager
def tuned_gc(thresholds: tuple[int, int, int] = DEFAULT_GC_THRESHOLDS) -> Iterator[None]:
    """Freeze the objects that exist now and raise the collector's thresholds.

    The previous thresholds are restored and the frozen objects released on exit. A
    block inside another one changes nothing (one collection, one freeze).
    """
    global _tuned
    if _tuned:
        _tuned += 1
        try:
            yield
        finally:
            _tuned -= 1
        return
    previous = gc.get_threshold()
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
    _tuned = 1
    try:
        yield
    finally:
        _tuned = 0
        gc.set_threshold(*previous)
        gc.unfreeze()


def tune_startup_gc(thresholds: tuple[int, int, int] = DEFAULT_GC_THRESHOLDS) -> None:
    """Raise the collector's thresholds before a process imports Inspect and the SDK.

    Importing them creates only long-lived objects (modules, classes, pydantic schemas),
    which CPython's default thresholds rescan in several full collections: 0.2 s of
    the 1.3 s the ``occubench`` command takes to import, 0.35 s of a shard worker's
    start. For an entry point; ``tuned_gc`` then freezes what the imports made.
    """
    gc.set_threshold(*thresholds)


def exit_now(code: int | str | None = 0) -> None:
    """End the process with ``code`` (as ``sys.exit`` takes it), skipping finalization.

    Exit handlers run first (logging and Inspect flush and close their files there),
    then stdout and stderr are flushed. Only for a process whose work is written and
    closed: a command-line entry point or a worker, never a library call.
    """
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)

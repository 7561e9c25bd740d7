"""Run one shard in this process: ``python -m occubench.scale.worker SPEC.json RESULT.json``.

SPEC.json holds a ``ShardSpec`` (model names and options, no secrets: API keys and base
URLs come from the environment). The ``ShardResult`` is written to RESULT.json; the
exit code is 0 when the shard completed, 1 when it did not, 130 when it was interrupted
(SIGINT or SIGTERM: its Inspect log is written with the finished samples, and so is the
result).

With ``--wait`` the worker starts before its shard is planned: it imports what a shard
needs (an eval's own start-up imports too, ``warm_eval_imports``: while the run's
preflight waits on the endpoints), then waits for one line on its standard input;
``go`` runs the shard whose spec is in SPEC.json by then, the end of the input ends the
worker at once (0, no result: it was not needed). The local executor
(``occubench.scale``) starts its workers so, by fork when it can, else with
``LAUNCHER``, which tunes the collector before anything is imported (``python -m``
would import the whole ``occubench.scale`` package first, with CPython's thresholds:
0.3-0.6 s more per start).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import IO

from occubench.defaults import DEFAULT_GC_THRESHOLDS

GO = b"go"
"""The line that tells a waiting worker to run its shard."""
WAIT = "--wait"
"""The argument of a worker that waits for ``GO`` before it runs."""
LAUNCHER = (
    f"import gc; gc.set_threshold(*{DEFAULT_GC_THRESHOLDS!r})\n"
    "from occubench.scale.worker import entry\n"
    "entry()"
)
"""``python -P -c LAUNCHER SPEC.json RESULT.json [--wait]``: the worker, collector tuned first."""


def serve(spec: Path, result: Path, go: IO[bytes] | None = None) -> int:
    """Run the shard of ``spec`` and write its result; with ``go``, first wait for ``GO`` on it.

    Returns the exit code (0 without running when ``go`` ends before ``GO``).
    """
    from occubench.errors import ExitCode
    from occubench.scale import ShardSpec, run_shard, stop_signals
    from occubench.scale._interpreter import warm_eval_imports

    if go is not None:
        warm_eval_imports()
    if go is not None and go.readline().strip() != GO:
        return ExitCode.OK  # not needed: nothing ran, nothing to report
    shard = ShardSpec.model_validate_json(spec.read_text())
    with stop_signals():
        outcome = run_shard(shard)
    partial = result.with_suffix(".partial")
    partial.write_text(outcome.model_dump_json(indent=2))
    partial.replace(result)
    if outcome.interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if outcome.success else ExitCode.INCOMPLETE


def main(argv: list[str] | None = None) -> int:
    """Run the shard described by the spec file; write the result file."""
    args = sys.argv[1:] if argv is None else argv
    wait = WAIT in args
    paths = [a for a in args if a != WAIT]
    if len(paths) != 2:
        print(
            "usage: python -m occubench.scale.worker SPEC.json RESULT.json [--wait]",
            file=sys.stderr,
        )
        return 2
    from occubench.scale._interpreter import tune_startup_gc

    tune_startup_gc()
    return serve(Path(paths[0]), Path(paths[1]), sys.stdin.buffer if wait else None)


def entry() -> None:
    """Run ``main`` and end the process with its code (``LAUNCHER``'s and ``-m``'s entry)."""
    from occubench.scale._interpreter import exit_now

    exit_now(main())


if __name__ == "__main__":
    entry()

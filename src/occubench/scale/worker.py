"""Run one shard in this process: ``python -m occubench.scale.worker SPEC.json RESULT.json``.

SPEC.json holds a ``ShardSpec`` (model names and options, no secrets: API keys and base
URLs come from the environment). The ``ShardResult`` is written to RESULT.json; the
exit code is 0 when the shard completed, 1 when it did not, 130 when it was interrupted
(SIGINT or SIGTERM: its Inspect log is written with the finished samples, and so is the
result). The local executor (``occubench.scale``) starts one such process per shard.
The collector is tuned first thing in ``main``, for what the shard imports from then on;
``python -m`` imports the ``occubench.scale`` package before this module, with CPython's
thresholds.
"""

from __future__ import annotations

import sys
from pathlib import Path

from occubench.scale._interpreter import exit_now, tune_startup_gc


def main(argv: list[str] | None = None) -> int:
    """Run the shard described by the spec file; write the result file."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m occubench.scale.worker SPEC.json RESULT.json", file=sys.stderr)
        return 2
    tune_startup_gc()
    from occubench.errors import ExitCode
    from occubench.scale import ShardSpec, run_shard, stop_signals  # after the tuning

    spec = ShardSpec.model_validate_json(Path(args[0]).read_text())
    with stop_signals():
        result = run_shard(spec)
    partial = Path(args[1]).with_suffix(".partial")
    partial.write_text(result.model_dump_json(indent=2))
    partial.replace(args[1])
    if result.interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.OK if result.success else ExitCode.INCOMPLETE


if __name__ == "__main__":
    exit_now(main())

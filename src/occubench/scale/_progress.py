"""One live view over many shards: samples done, errors, tokens, time left.

The view reads what the shards have written to their log folders (Inspect flushes
sample summaries as samples finish), so it works the same for worker processes and
for Ray tasks on other machines writing to a shared path or object store. Only the
running shards are read, at most every ``poll`` seconds.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from types import TracebackType

from inspect_ai.log import EvalSampleSummary, list_eval_logs, read_eval_log_sample_summaries
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from occubench.defaults import DEFAULT_PROGRESS_POLL_SECONDS
from occubench.scale._spec import ShardSpec

_MAX_ROWS = 12


class ShardState(str, Enum):  # noqa: UP042 - same str-Enum style as EnvMode
    """Where a shard is in its life."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"


@dataclass
class ShardCounts:
    """Samples of one shard found in its log folder."""

    done: int = 0
    errors: int = 0
    tokens: int = 0


def read_shard_counts(log_dir: str) -> ShardCounts:
    """Finished samples, errored samples and tokens in a shard's log folder.

    A sample that appears in several logs (a resumed eval set copies finished
    samples into its new log) counts once, as in its newest log.
    """
    latest: dict[tuple[int | str, int], EvalSampleSummary] = {}
    for info in sorted(list_eval_logs(log_dir), key=lambda i: i.mtime or 0.0):
        try:
            summaries = read_eval_log_sample_summaries(info)
        except Exception:  # noqa: BLE001 - a log being written now: read again at the next poll
            continue
        latest.update({(s.id, s.epoch): s for s in summaries})
    return ShardCounts(
        done=len(latest),
        errors=sum(s.error is not None for s in latest.values()),
        tokens=sum(u.total_tokens for s in latest.values() for u in s.model_usage.values()),
    )


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m" if hours else f"{minutes}m{secs:02d}s"


class ProgressView:
    """A rich Live view across shards; the executors call ``update`` as states change."""

    def __init__(
        self,
        shards: Sequence[ShardSpec],
        console: Console,
        poll: float = DEFAULT_PROGRESS_POLL_SECONDS,
    ) -> None:
        self.shards = list(shards)
        self.states = [ShardState.PENDING] * len(self.shards)
        self.counts = [ShardCounts() for _ in self.shards]
        self.poll = poll
        self._live = Live(console=console, auto_refresh=False)
        self._start = time.monotonic()
        self._read_at = -poll
        self._read_cost = 0.0
        self._done_at_start: int | None = None

    def __enter__(self) -> ProgressView:
        self._live.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.update(self.states, force=True)
        self._live.stop()
        if not self._live.console.is_terminal:  # the last frame was printed without a newline
            self._live.console.line()

    def update(self, states: Sequence[ShardState], force: bool = False) -> None:
        """Record the shards' states; re-read the logs of the running ones when due.

        A shard is read on every change of its state (so a finished or pending shard
        with logs from an earlier session is counted) and, while it runs, every
        ``poll`` seconds or five times as long as the last reading took.
        """
        now = time.monotonic()
        # reading costs time (many shards, a remote store): keep it under a fifth of the wall
        due = force or now - self._read_at >= max(self.poll, 5 * self._read_cost)
        changed = [i for i, state in enumerate(states) if state != self.states[i]]
        if not (due or changed):
            return
        for i, state in enumerate(states):
            if i in changed or (due and state is ShardState.RUNNING) or self._done_at_start is None:
                self.counts[i] = read_shard_counts(self.shards[i].log_dir)
            self.states[i] = state
        if due:
            self._read_at = time.monotonic()
            self._read_cost = self._read_at - now
        if self._done_at_start is None:
            self._done_at_start = sum(c.done for c in self.counts)
        self._live.update(self.render(), refresh=True)

    def render(self) -> Group:
        """The table of running (or failed) shards and a totals line."""
        table = Table(title=f"occubench: {len(self.shards)} shard(s)", title_justify="left")
        for name, justify in (
            ("shard", "left"),
            ("state", "left"),
            ("samples", "right"),
            ("errors", "right"),
            ("tokens", "right"),
        ):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        shown = [
            i
            for i, s in enumerate(self.states)
            if len(self.shards) <= _MAX_ROWS or s in (ShardState.RUNNING, ShardState.FAILED)
        ]
        for i in shown[:_MAX_ROWS]:
            c = self.counts[i]
            table.add_row(
                self.shards[i].name,
                self.states[i].value,
                f"{c.done}/{self.shards[i].samples}",
                str(c.errors),
                f"{c.tokens:,}",
            )
        return Group(table, Text(self.totals()))

    def totals(self) -> str:
        """Samples done / total, errors, tokens, shard states, elapsed and time left."""
        total = sum(s.samples for s in self.shards)
        done = sum(c.done for c in self.counts)
        elapsed = time.monotonic() - self._start
        fresh = done - (self._done_at_start or 0)
        left = "-" if fresh <= 0 else _duration((total - done) * elapsed / fresh)
        states = ", ".join(
            f"{sum(s is state for s in self.states)} {state.value}" for state in ShardState
        )
        return (
            f"{done}/{total} samples, {sum(c.errors for c in self.counts)} errors, "
            f"{sum(c.tokens for c in self.counts):,} tokens | shards: {states} | "
            f"elapsed {_duration(elapsed)}, left {left}"
        )

"""The spending limit of a run (``--budget USD``): no new sample once it would be passed.

Mechanism. While a run with a budget goes, one ``SpendGuard`` is installed in the process
(``spending_limit``). An Inspect hook feeds it: every model call's usage, as it completes,
is priced and added to the spend (``on_model_usage``), and every finished sample's whole
usage (its judge votes included) to the cost of finished samples (``on_sample_end``). A
run's first solver step (``admission``) asks it at the start of each sample
(``admit_sample``), whatever the agent: the sample starts when

    spent so far + (samples in flight + 1) x expected cost of a sample <= budget,

where the expected cost of a sample is the mean cost of the finished samples, or, before
any has finished, the run's estimate (``occubench estimate``). A sample in flight is
counted at that full cost on top of what it has already spent, so the rule errs on the
side of stopping early. A sample that is not admitted ends at once as an error of source
``budget`` (counted apart, never an agent failure; a later run of the same command with a
larger budget runs it); samples in flight finish.

Scope. The guard is per process. A sharded run gives each shard an even share of the
budget (``budget / shards``), so the shards together stay within it, and a shard may stop
while another still has money left.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from inspect_ai.hooks import Hooks, ModelUsageData, SampleEnd, hooks
from inspect_ai.model import ModelUsage
from inspect_ai.solver import Generate, Solver, TaskState, solver
from pydantic import BaseModel, Field

from occubench.errors import BudgetExhausted

logger = logging.getLogger(__name__)

Pricer = Callable[[str, ModelUsage], float]
"""Dollars a model's usage costs (by Inspect model name)."""


class Spend(BaseModel):
    """Where a guarded run stands."""

    limit: float = Field(description="The budget in dollars (this process's share).")
    spent: float = Field(default=0.0, description="Dollars of every model call so far.")
    finished: int = Field(default=0, description="Samples finished.")
    finished_cost: float = Field(default=0.0, description="Dollars of the finished samples.")
    in_flight: int = Field(default=0, description="Samples started and not finished.")
    refused: int = Field(default=0, description="Sample starts refused.")


class SpendGuard:
    """Admits samples while the spend stays within the limit (module doc).

    Args:
        limit: Dollars this process may spend.
        price: The cost of a model's usage.
        expected_per_sample: The estimated cost of one sample (until samples finish).
    """

    def __init__(self, limit: float, price: Pricer, expected_per_sample: float) -> None:
        self.price = price
        self.expected_per_sample = expected_per_sample
        self.spend = Spend(limit=limit)
        self._running: set[str] = set()
        self._lock = threading.Lock()

    def per_sample(self) -> float:
        """The expected cost of one more sample."""
        s = self.spend
        return s.finished_cost / s.finished if s.finished else self.expected_per_sample

    def admit(self, sample: str) -> None:
        """Let a sample start, or raise ``BudgetExhausted`` (a retry of a running one passes).

        Raises:
            BudgetExhausted: the spend would pass the limit.
        """
        with self._lock:
            if sample in self._running:
                return
            s = self.spend
            projected = s.spent + (len(self._running) + 1) * self.per_sample()
            if projected > s.limit:
                if not s.refused:
                    logger.warning(
                        "budget $%.4f reached (spent $%.4f): no new samples; %d in flight finish",
                        s.limit,
                        s.spent,
                        len(self._running),
                    )
                s.refused += 1
                raise BudgetExhausted(
                    f"not started: the budget of ${s.limit:.4f} would be passed (spent "
                    f"${s.spent:.4f}, {len(self._running)} sample(s) in flight at about "
                    f"${self.per_sample():.4f} each)"
                )
            self._running.add(sample)
            s.in_flight = len(self._running)

    def charge(self, model: str, usage: ModelUsage) -> None:
        """Add one model call's cost to the spend."""
        with self._lock:
            self.spend.spent += self.price(model, usage)

    def finish(self, sample: str, usage: Mapping[str, ModelUsage]) -> None:
        """A sample ended: count its whole cost (nothing for a sample never admitted)."""
        with self._lock:
            if sample not in self._running:
                return
            self._running.discard(sample)
            self.spend.finished += 1
            self.spend.finished_cost += sum(self.price(m, u) for m, u in usage.items())
            self.spend.in_flight = len(self._running)


_active: SpendGuard | None = None


@contextmanager
def spending_limit(guard: SpendGuard | None) -> Iterator[SpendGuard | None]:
    """Install ``guard`` for the duration of a run (None: no limit)."""
    global _active
    if guard is not None and _active is not None:
        raise RuntimeError("a spending limit is already installed in this process")
    _active = guard
    try:
        yield guard
    finally:
        if guard is not None:
            _active = None


def admit_sample(sample: str) -> None:
    """At the start of a sample: refuse it when the installed budget would be passed.

    Raises:
        BudgetExhausted: the spend would pass the limit.
    """
    if _active is not None:
        _active.admit(sample)


@solver
def admission() -> Solver:
    """The first step of a run's solver: a sample the budget cannot pay for does not start."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        admit_sample(state.uuid)
        return state

    return solve


@hooks(name="occubench_budget", description="Feeds a run's spending limit with its usage.")
class BudgetHooks(Hooks):
    """Prices every model call and every finished sample for the installed guard."""

    def enabled(self) -> bool:
        """Only while a guarded run goes."""
        return _active is not None

    async def on_model_usage(self, data: ModelUsageData) -> None:
        """A model call completed: add its cost."""
        if _active is not None:
            _active.charge(data.model_name, data.usage)

    async def on_sample_end(self, data: SampleEnd) -> None:
        """A sample finished: count its cost among the finished samples'."""
        if _active is not None:
            _active.finish(data.sample_id, data.sample.model_usage)

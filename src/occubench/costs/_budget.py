"""The spending limit of a run (``--budget USD``): no model call that could pass it is made.

Guarantee. While a run with a budget goes, one ``SpendGuard`` is installed in the process
(``spending_limit``), and every model call of the run (agent, simulator, judge: each goes
through ``occubench.calls.ResilientModel``, whose gate the guard is) is made only if

    spent + reserved + the call's ceiling <= budget,

where ``spent`` is what the completed calls cost (an Inspect hook prices each call's usage
as it completes, ``on_model_usage``), ``reserved`` is the ceilings of the calls in flight,
and a call's ceiling is the most it can cost (``call_ceiling``): its prompt's size in UTF-8
bytes (a token of the tokenizers providers use stands for at least one byte) plus
``PROMPT_OVERHEAD_TOKENS``, at the dearer of the model's input and cache-read prices, and
its ``max_tokens`` (times its choices) at the output price. The ceiling is reserved while
the call runs and released once its real cost is charged, so the calls in flight can
never together pass the budget. A call that does not fit only because of other calls in
flight waits for them; one that cannot fit whatever they cost (``spent + ceiling >
budget``) is not made, and so is a call with no ``max_tokens`` (the provider sets none
either): its sample ends as an error of source ``budget`` (counted apart, never an agent
failure; the same command again runs it). The spend of a run therefore never passes its
budget, as far as the provider bills what Inspect reports (``Limits`` below).

Admission. So that money is not spent on samples that would be stopped half-way, a run's
first solver step (``admission``) starts a sample only when

    spent + reserved + (what the samples in flight still need) + one sample
        + the largest call ceiling seen <= budget,

a sample costing the mean of the samples that ran to their end, and never less than the
most any sample in flight has spent so far; a sample in flight still needs that cost
less what it has spent; the largest ceiling is the room a sample's last call needs. Until
a sample has run to its end there is no mean, only the run's estimate (``occubench
estimate``), which can be several times too low (an agent that re-reads every step): so
samples start one at a time, each on the estimate, until one has ended. A sample that does
not fit waits while samples are in flight (they end, or cost less than feared); with none
in flight it is refused and ends at once as a ``budget`` error too, and so does every
later one, since the spend only grows. Admission only spends the budget well; the
per-call rule alone bounds it: a sample that costs far more than the mean is stopped
half-way (its spend is within the budget, but buys no result).

Limits. Prices are the run's price table; a model without a price costs nothing here
(``occubench run --budget`` refuses a run with one). Not counted, because Inspect never
reports them: tokens of a failed attempt that the provider billed anyway, and images or
other media given by URL rather than inline. The output ceiling trusts the provider to
stop a reply at ``max_tokens``, reasoning tokens included.

Scope. The guard is per process and per invocation. A sharded run gives each shard an
even share of the budget (``budget / shards``), so the shards together stay within it,
and a shard may stop while another still has money left.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from contextvars import ContextVar
from typing import NoReturn

import anyio
from inspect_ai.hooks import (
    Hooks,
    ModelUsageData,
    SampleAttemptEnd,
    SampleAttemptStart,
    SampleEnd,
    hooks,
)
from inspect_ai.model import ChatMessage, ChatMessageSystem, GenerateConfig, Model, ModelUsage
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.tool import ToolInfo
from pydantic import BaseModel, Field

from occubench.calls import gated_calls, prompt_tokens_ceiling
from occubench.errors import BudgetExhausted, ErrorSource, error_source
from occubench.providers import PROVIDER_PACKAGES

logger = logging.getLogger(__name__)

Pricer = Callable[[str, ModelUsage], float]
"""Dollars a model's usage costs (by Inspect model name)."""


class Spend(BaseModel):
    """Where a guarded run stands."""

    limit: float = Field(description="The budget in dollars (this process's share).")
    spent: float = Field(default=0.0, description="Dollars of every completed model call.")
    reserved: float = Field(default=0.0, description="Ceilings of the model calls in flight.")
    finished: int = Field(
        default=0, description="Samples that ran to their end (an error of another source too)."
    )
    finished_cost: float = Field(default=0.0, description="Dollars of the finished samples.")
    in_flight: int = Field(default=0, description="Samples started and not ended.")
    refused: int = Field(
        default=0,
        description="Samples that did not start: not admitted, or their first paid model "
        "call was refused.",
    )
    stopped: int = Field(
        default=0, description="Samples ended half-way by a model call the budget refused."
    )

    @property
    def reached(self) -> bool:
        """Whether the budget stopped anything (a sample not started or stopped)."""
        return bool(self.refused or self.stopped)


def combined(spends: Sequence[Spend]) -> Spend | None:
    """The spends of several shards as one (None for none)."""
    if not spends:
        return None
    fields = Spend.model_fields
    return Spend(**{name: sum(getattr(s, name) for s in spends) for name in fields})


class CallCeiling(BaseModel):
    """The most tokens one model call can be billed for."""

    input_tokens: int = Field(description="Prompt tokens at most (its bytes and the overhead).")
    output_tokens: int | None = Field(
        description="Output tokens at most: max_tokens times choices (None: no max_tokens)."
    )


def call_ceiling(
    model: Model, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo], config: GenerateConfig
) -> CallCeiling:
    """The ceiling of a call of ``model`` with these messages, tools and settings.

    ``max_tokens`` is resolved as Inspect resolves it: the call's, else the model's
    settings', else the provider's default; a system message of the settings counts.
    """
    settings = model.config.merge(config)
    if settings.system_message:
        messages = [ChatMessageSystem(content=settings.system_message), *messages]
    max_tokens = (
        settings.max_tokens or model.api.max_tokens_for_config(settings) or model.api.max_tokens()
    )
    choices = settings.num_choices or 1
    return CallCeiling(
        input_tokens=prompt_tokens_ceiling(messages, tools),
        output_tokens=max_tokens * choices if max_tokens else None,
    )


class SpendGuard:
    """Makes a model call, or starts a sample, only within the limit (module doc).

    Args:
        limit: Dollars this process may spend.
        price: The cost of a model's usage.
        expected_per_sample: The estimated cost of one sample (until samples finish).
    """

    def __init__(self, limit: float, price: Pricer, expected_per_sample: float) -> None:
        self.price = price
        self.expected_per_sample = expected_per_sample
        self.spend = Spend(limit=limit)
        self._running: dict[str, float] = {}  # sample -> what it has spent
        self._attempting: set[str] = set()  # running samples inside an attempt (not between)
        self._refused: set[str] = set()
        self._lock = threading.Lock()
        self._changed: anyio.Event | None = None
        self._largest_call = 0.0
        self._calls = 0  # calls in flight

    def per_sample(self) -> float:
        """What one sample is expected to cost (module doc: admission)."""
        s = self.spend
        mean = s.finished_cost / s.finished if s.finished else self.expected_per_sample
        return max(mean, *self._running.values()) if self._running else mean

    async def admit(self, sample: str) -> None:
        """Let a sample start once the budget has room for it (a retry of a running one passes).

        While samples are in flight a sample that does not fit waits for them (they may
        cost less than feared, and finished ones measure the mean), and so does any
        sample while none has finished; with none in flight, one that does not fit is
        refused. Only samples inside an attempt hold it back: one between attempts waits
        for a slot Inspect gives, maybe the one this sample holds.

        Raises:
            BudgetExhausted: the sample does not fit and no sample is in flight.
        """
        while True:
            with self._lock:
                if sample in self._running:
                    self._attempting.add(sample)
                    return
                s = self.spend
                each = self.per_sample()
                needed = sum(max(0.0, each - spent) for spent in self._running.values())
                measured = s.finished or not self._attempting  # else: one at a time
                fits = s.spent + s.reserved + needed + each + self._largest_call <= s.limit
                if measured and fits:
                    self._running[sample] = 0.0
                    self._attempting.add(sample)
                    self._refused.discard(sample)
                    s.refused, s.in_flight = len(self._refused), len(self._running)
                    return
                if not self._attempting and not self._calls:
                    self._refuse(sample, each)
                changed = self._next_change()
            await changed.wait()

    def _refuse(self, sample: str, each: float) -> NoReturn:
        s = self.spend
        if not self._refused:
            logger.warning("budget $%.4f reached (spent $%.4f): no new samples", s.limit, s.spent)
        self._refused.add(sample)
        s.refused = len(self._refused)
        raise BudgetExhausted(
            f"not started: the budget of ${s.limit:.4f} has ${max(0.0, s.limit - s.spent):.4f} "
            f"left, less than a sample (about ${each:.4f}) and the room its calls need "
            f"(${self._largest_call:.4f})"
        )

    def _next_change(self) -> anyio.Event:
        """The event set at the next release or sample end (under the lock)."""
        if self._changed is None:
            self._changed = anyio.Event()
        return self._changed

    def _signal_change(self) -> None:
        """Wake whoever waits for room (under the lock)."""
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    def ceiling_cost(self, model: str, ceiling: CallCeiling) -> float:
        """Dollars a call can cost at most (its prompt at the dearer of input and cache reads)."""
        output = ceiling.output_tokens or 0
        return max(
            self.price(model, ModelUsage(input_tokens=ceiling.input_tokens, output_tokens=output)),
            self.price(
                model,
                ModelUsage(input_tokens_cache_read=ceiling.input_tokens, output_tokens=output),
            ),
        )

    async def reserve(self, model: str, ceiling: CallCeiling) -> float:
        """Reserve a call's ceiling, waiting for calls in flight when they hold the room.

        Returns:
            The dollars reserved (give them to ``release`` once the call is over).

        Raises:
            BudgetExhausted: the call has no ceiling, or could pass the limit whatever the
                calls in flight cost.
        """
        if ceiling.output_tokens is None:
            raise BudgetExhausted(
                f"call not made: a call of {model} without max_tokens has no cost ceiling, "
                "so a budget cannot cover it (give the call a max_tokens; occubench's own "
                "roles take --max-tokens ROLE=N)"
            )
        cost = self.ceiling_cost(model, ceiling)
        while True:
            with self._lock:
                self._largest_call = max(self._largest_call, cost)
                s = self.spend
                if s.spent + cost > s.limit:
                    raise BudgetExhausted(
                        f"call not made: a call of {model} can cost up to ${cost:.4f} and "
                        f"the budget of ${s.limit:.4f} has ${max(0.0, s.limit - s.spent):.4f} left"
                    )
                if s.spent + s.reserved + cost <= s.limit:
                    s.reserved += cost
                    self._calls += 1
                    return cost
                changed = self._next_change()
            await changed.wait()

    def release(self, cost: float) -> None:
        """A call is over (its real cost charged, or it failed): free its reservation."""
        with self._lock:
            self._calls -= 1
            self.spend.reserved = self.spend.reserved - cost if self._calls else 0.0  # no drift
            self._signal_change()

    @asynccontextmanager
    async def reserved(self, model: str, ceiling: CallCeiling) -> AsyncIterator[None]:
        """A call's ceiling reserved while the block runs (``reserve``, then ``release``)."""
        cost = await self.reserve(model, ceiling)
        try:
            yield
        finally:
            self.release(cost)

    def gate(
        self,
        model: Model,
        messages: list[ChatMessage],
        tools: list[ToolInfo],
        config: GenerateConfig,
    ) -> AbstractAsyncContextManager[None]:
        """The gate of every model call of the run (``occubench.calls.CallGate``)."""
        return self.reserved(str(model), call_ceiling(model, messages, tools, config))

    def charge(self, model: str, usage: ModelUsage, sample: str | None = None) -> None:
        """Add one completed call's cost to the spend (and to its sample's)."""
        cost = self.price(model, usage)
        with self._lock:
            self.spend.spent += cost
            if sample in self._running:
                self._running[sample] += cost

    def pause(self, sample: str) -> None:
        """A sample's attempt ended and it will be retried: it waits for a slot, not for us."""
        with self._lock:
            self._attempting.discard(sample)
            self._signal_change()

    def finish(self, sample: str, stopped: bool) -> None:
        """A sample ended (``stopped``: by a refused call); nothing for one never admitted.

        One stopped before any paid call counts as not started.
        """
        with self._lock:
            if sample not in self._running:
                return
            cost = self._running.pop(sample)
            self._attempting.discard(sample)
            s = self.spend
            if stopped and not cost:
                self._refused.add(sample)
                s.refused = len(self._refused)
            elif stopped:
                s.stopped += 1
            else:
                s.finished += 1
                s.finished_cost += cost
            s.in_flight = len(self._running)
            self._signal_change()


_active: SpendGuard | None = None
_sample: ContextVar[str | None] = ContextVar("occubench_budget_sample", default=None)


@contextmanager
def spending_limit(guard: SpendGuard | None) -> Iterator[SpendGuard | None]:
    """Install ``guard`` for the duration of a run, as the gate of every call (None: no limit)."""
    global _active
    if guard is None:
        yield None
        return
    if _active is not None:
        raise RuntimeError("a spending limit is already installed in this process")
    _active = guard
    try:
        with gated_calls(guard.gate):
            yield guard
    finally:
        _active = None


async def admit_sample(sample: str) -> None:
    """At the start of a sample: wait for room in the installed budget, or refuse it.

    Raises:
        BudgetExhausted: the sample does not fit in what is left.
    """
    if _active is not None:
        await _active.admit(sample)


@solver
def admission() -> Solver:
    """The first step of a run's solver: a sample the budget cannot pay for does not start."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await admit_sample(state.uuid)
        return state

    return solve


@hooks(name="occubench_budget", description="Feeds a run's spending limit with its usage.")
class BudgetHooks(Hooks):
    """Prices every model call, per sample, for the installed guard."""

    def enabled(self) -> bool:
        """Only while a guarded run goes."""
        return _active is not None

    async def on_sample_attempt_start(self, data: SampleAttemptStart) -> None:
        """An attempt starts (in the sample's own task): its calls are charged to it."""
        _sample.set(data.sample_id)

    async def on_sample_attempt_end(self, data: SampleAttemptEnd) -> None:
        """An attempt ended; one to be retried waits for a slot (``SpendGuard.pause``)."""
        if _active is not None and data.will_retry:
            _active.pause(data.sample_id)

    async def on_model_usage(self, data: ModelUsageData) -> None:
        """A model call completed: add its cost."""
        if _active is not None:
            _active.charge(data.model_name, data.usage, _sample.get())

    async def on_sample_end(self, data: SampleEnd) -> None:
        """A sample ended: it finished, or a refused call stopped it."""
        if _active is not None:
            error = data.sample.error
            stopped = (
                error is not None
                and error_source(error.traceback, PROVIDER_PACKAGES) is ErrorSource.BUDGET
            )
            _active.finish(data.sample_id, stopped)

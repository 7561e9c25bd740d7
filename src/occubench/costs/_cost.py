"""Cost of runs from a price table: per sample, per run, per task and per solved task.

A price table names Inspect models (``openai/gpt-5``, ``openai-api/local/m``, ...) with
their prices in dollars per million tokens, in YAML or JSON:

```yaml
models:
  openai/gpt-5: {input_per_mtok: 1.25, output_per_mtok: 10.0, cached_input_per_mtok: 0.125}
  anthropic/claude-sonnet-4-5: {input_per_mtok: 3.0, output_per_mtok: 15.0,
                                release_date: 2025-09-29}
```

A model's optional ``release_date`` places it on the report's model-generations chart.

Token counts follow Inspect's ``ModelUsage``: ``input_tokens`` are the tokens charged at
the full input rate (prompt-cache reads and writes excluded). Cache reads are charged at
``cached_input_per_mtok`` (the input price when none is given), cache writes at the input
price. Responses served by Inspect's own response cache record no usage: they cost
nothing. A role whose model has no price makes the sample's cost unknown (None),
unless that role used no tokens.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Sequence
from pathlib import Path

from inspect_ai.model import ModelUsage
from pydantic import BaseModel, Field, ValidationError

from occubench.errors import UsageError
from occubench.results import SampleRow
from occubench.roles import Role
from occubench.text import YamlBoundError, bounded_yaml, nests_deeper

PER_MTOK = 1_000_000


class PriceError(UsageError):
    """A price file could not be read; the message names the file and the fields."""


class ModelPrice(BaseModel):
    """Prices of one model, in dollars per million tokens."""

    input_per_mtok: float = Field(ge=0, description="Input tokens at the full rate.")
    output_per_mtok: float = Field(ge=0, description="Output tokens (reasoning included).")
    cached_input_per_mtok: float | None = Field(
        default=None, ge=0, description="Input tokens read from a prompt cache (default: input)."
    )
    release_date: dt.date | None = Field(
        default=None, description="When the model was released (the model-generations chart)."
    )


class PriceTable(BaseModel):
    """Prices by Inspect model name."""

    models: dict[str, ModelPrice] = Field(description="Model name -> its prices.")

    def release_dates(self) -> dict[str, dt.date]:
        """Release dates of the models that give one."""
        return {name: p.release_date for name, p in self.models.items() if p.release_date}


MAX_PRICE_FILE_BYTES = 1024 * 1024
"""Largest price file read (a table of a thousand models is some 100 kB)."""
MAX_PRICE_FILE_VALUES = 100_000
"""Most YAML values in a price file (aliases counted at their expanded size)."""
MAX_PRICE_FILE_DEPTH = 16
"""Deepest nesting of a price file (the format nests three levels)."""


def _bounded_json(path: Path, where: str) -> object:
    """A JSON price file, its size and nesting checked before it is parsed.

    Raises:
        PriceError: unreadable, over a bound, or not JSON.
    """
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_PRICE_FILE_BYTES + 1)
    except OSError as e:
        raise PriceError(f"{where}: cannot read it ({e.strerror or e})") from None
    if len(raw) > MAX_PRICE_FILE_BYTES:
        raise PriceError(f"{where}: larger than {MAX_PRICE_FILE_BYTES:,} bytes")
    if nests_deeper(raw, MAX_PRICE_FILE_DEPTH):
        raise PriceError(f"{where}: nested deeper than {MAX_PRICE_FILE_DEPTH} levels")
    try:
        return json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise PriceError(f"{where}: not valid JSON: {e}") from None


def load_prices(path: str | Path) -> PriceTable:
    """Read a price table from a YAML or JSON file (``.json`` is read as JSON).

    Raises:
        PriceError: when the file is missing, not parseable, or a field is invalid.

    """
    path = Path(path)
    where = f"price file {path}"
    try:
        if path.suffix.lower() == ".json":
            data = _bounded_json(path, where)
        else:
            data = bounded_yaml(
                path,
                where,
                max_bytes=MAX_PRICE_FILE_BYTES,
                max_nodes=MAX_PRICE_FILE_VALUES,
                max_depth=MAX_PRICE_FILE_DEPTH,
            )
    except YamlBoundError as e:
        raise PriceError(str(e)) from None
    if not isinstance(data, dict) or "models" not in data:
        raise PriceError(
            f"price file {path}: expected a mapping with a 'models' key "
            "(models: {MODEL: {input_per_mtok: ..., output_per_mtok: ...}})"
        )
    try:
        return PriceTable.model_validate(data)
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in e.errors()
        )
        raise PriceError(f"price file {path}: {problems}") from None


def role_model(row: SampleRow, role: str) -> str | None:
    """Model that played ``role`` in the row's run (the verifier defaults to the simulator).

    The agent's is its Inspect model, also when an agent program or an Inspect agent used it.
    """
    if role == Role.AGENT.value:
        return row.agent_model_name or row.agent_model
    if role == Role.SIMULATOR.value:
        return row.simulator_model
    if role == Role.VERIFIER.value:
        return row.verifier_model or row.simulator_model
    if role == Role.SIMULATOR_FALLBACK.value:
        return row.sim_fallback_model
    if role == Role.USER.value:
        return row.user_model
    return None


def _used(row: SampleRow, role: str) -> bool:
    return any(
        counts.get(role, 0)
        for counts in (
            row.tokens,
            row.input_tokens,
            row.output_tokens,
            row.input_tokens_cache_read,
            row.input_tokens_cache_write,
        )
    )


def _roles(row: SampleRow) -> list[str]:
    names = {
        *row.tokens,
        *row.input_tokens,
        *row.output_tokens,
        *row.input_tokens_cache_read,
        *row.input_tokens_cache_write,
    }
    return sorted(r for r in names if _used(row, r))


def unpriced_models(row: SampleRow, prices: PriceTable) -> list[str]:
    """Models that used tokens in the row but have no price (a role of unknown model: its name)."""
    missing = []
    for role in _roles(row):
        model = role_model(row, role)
        if model is None or model not in prices.models:
            missing.append(model or f"<model of role {role!r}>")
    return sorted(set(missing))


def role_cost(row: SampleRow, role: str, price: ModelPrice) -> float:
    """Dollars one role's tokens cost in the row at ``price``."""
    cached = price.cached_input_per_mtok
    return (
        row.input_tokens.get(role, 0) * price.input_per_mtok
        + row.input_tokens_cache_write.get(role, 0) * price.input_per_mtok
        + row.input_tokens_cache_read.get(role, 0)
        * (price.input_per_mtok if cached is None else cached)
        + row.output_tokens.get(role, 0) * price.output_per_mtok
    ) / PER_MTOK


def usage_cost(prices: PriceTable, model: str, usage: ModelUsage) -> float | None:
    """Dollars one model's usage costs (None when the model has no price)."""
    price = prices.models.get(model)
    if price is None:
        return None
    cached = (
        price.input_per_mtok if price.cached_input_per_mtok is None else price.cached_input_per_mtok
    )
    return (
        usage.input_tokens * price.input_per_mtok
        + (usage.input_tokens_cache_write or 0) * price.input_per_mtok
        + (usage.input_tokens_cache_read or 0) * cached
        + usage.output_tokens * price.output_per_mtok
    ) / PER_MTOK


def row_cost(row: SampleRow, prices: PriceTable) -> float | None:
    """Dollars the sample cost over all roles; None when a model that used tokens has no price."""
    total = 0.0
    for role in _roles(row):
        model = role_model(row, role)
        if model is None or model not in prices.models:
            return None
        total += role_cost(row, role, prices.models[model])
    return total


class CostSummary(BaseModel):
    """Cost of a group of samples (a run, a model, ...)."""

    group: str = Field(description="What the samples have in common (e.g. the run id).")
    samples: int = Field(description="Samples (task x epoch), errored ones included.")
    solved: int = Field(description="Samples whose verdict is a pass.")
    total: float | None = Field(description="Dollars; None when some sample has no price.")
    per_task: float | None = Field(description="total / samples.")
    per_solved_task: float | None = Field(description="total / solved (None when none solved).")
    unpriced_models: list[str] = Field(
        default_factory=list, description="Models that used tokens and have no price."
    )


def cost_summary(group: str, rows: Sequence[SampleRow], prices: PriceTable) -> CostSummary:
    """Total cost of ``rows``, per task and per solved task (errored samples cost too)."""
    costs = [row_cost(r, prices) for r in rows]
    missing = sorted({m for r in rows for m in unpriced_models(r, prices)})
    solved = sum(r.passed is True for r in rows)
    total = None if missing else sum(c or 0.0 for c in costs)
    return CostSummary(
        group=group,
        samples=len(rows),
        solved=solved,
        total=total,
        per_task=total / len(rows) if total is not None and rows else None,
        per_solved_task=total / solved if total is not None and solved else None,
        unpriced_models=missing,
    )


def costs_by(
    rows: Sequence[SampleRow],
    prices: PriceTable,
    key: Callable[[SampleRow], str] = lambda r: r.run_id,
) -> list[CostSummary]:
    """One cost summary per value of ``key`` (default: per run), sorted by name."""
    groups: dict[str, list[SampleRow]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    return [cost_summary(name, groups[name], prices) for name in sorted(groups)]


class RoleSpend(BaseModel):
    """Tokens and cost of one role over a group of samples."""

    group: str = Field(description="What the samples have in common (e.g. the run).")
    role: str = Field(description="agent, simulator, verifier, simulator_fallback.")
    model: str | None = Field(description="Model that played the role.")
    input_tokens: int = Field(description="Input tokens at the full rate.")
    cached_tokens: int = Field(description="Input tokens read from or written to a cache.")
    output_tokens: int = Field(description="Output tokens.")
    cost: float | None = Field(description="Dollars (None: no prices, or the model has none).")


def role_spend(
    rows: Sequence[SampleRow],
    prices: PriceTable | None = None,
    key: Callable[[SampleRow], str] = lambda r: r.run_id,
) -> list[RoleSpend]:
    """Tokens and cost per group and role (a judge without a verifier model is ``simulator``)."""
    groups: dict[tuple[str, str], list[SampleRow]] = {}
    for row in rows:
        for role in _roles(row):
            groups.setdefault((key(row), role), []).append(row)
    out = []
    for (name, role), members in sorted(groups.items()):
        model = role_model(members[0], role)
        price = prices.models.get(model) if prices is not None and model else None
        out.append(
            RoleSpend(
                group=name,
                role=role,
                model=model,
                input_tokens=sum(r.input_tokens.get(role, 0) for r in members),
                cached_tokens=sum(
                    r.input_tokens_cache_read.get(role, 0) + r.input_tokens_cache_write.get(role, 0)
                    for r in members
                ),
                output_tokens=sum(r.output_tokens.get(role, 0) for r in members),
                cost=None if price is None else sum(role_cost(r, role, price) for r in members),
            )
        )
    return out

"""Which published rows and statements stand for a measured setup.

A report names a setup by its agent (the Inspect model, with ``[reasoning_effort=...]``
when an effort was set, as sweeps label agents) and its simulator. A published row of one
agent stands for it when the row's model and simulator (``PublishedTable.models``) are
those Inspect models and its reasoning effort (the row's, else the table's) is the run's;
a run without an effort matches rows that state none. Averages rows stand for no setup.
"""

from __future__ import annotations

from occubench.published._table import PublishedAgreement, PublishedRow, PublishedTable

EFFORT_OPTION = "reasoning_effort="
"""How a report's agent name states the reasoning effort inside its brackets."""


def split_agent(agent: str) -> tuple[str, str | None]:
    """A report's agent name as (Inspect model, reasoning effort or None).

    ``openai/gpt-5.2[reasoning_effort=high]`` is ``("openai/gpt-5.2", "high")``; other
    options in the brackets are not compared.
    """
    if not agent.endswith("]") or "[" not in agent:
        return agent, None
    model, _, options = agent[:-1].rpartition("[")
    efforts = [o[len(EFFORT_OPTION) :] for o in options.split(",") if o.startswith(EFFORT_OPTION)]
    return model, efforts[0] if efforts else None


def stands_for(table: PublishedTable, row: PublishedRow, agent: str, simulator: str) -> bool:
    """Whether ``row`` reports the setup of ``agent`` under ``simulator`` (module doc)."""
    model, effort = split_agent(agent)
    if row.averages or table.inspect_model(row.model) != model:
        return False
    if row.simulator is not None and table.inspect_model(row.simulator) != simulator:
        return False
    stated = row.reasoning_effort or table.reasoning_effort
    return effort == stated or (effort is None and row.reasoning_effort is None)


def rows_for(table: PublishedTable, agent: str, simulator: str) -> list[PublishedRow]:
    """The table's rows that report ``agent`` under ``simulator``, in the file's order."""
    return [row for row in table.rows if stands_for(table, row, agent, simulator)]


def agreements_for(
    table: PublishedTable, simulator_a: str, simulator_b: str, mode: str
) -> list[PublishedAgreement]:
    """The stated ranking agreements of these two simulators (Inspect names) in ``mode``."""
    pair = {simulator_a, simulator_b}
    return [
        found
        for found in table.agreements
        if found.env_mode == mode and {table.inspect_model(s) for s in found.simulators} == pair
    ]

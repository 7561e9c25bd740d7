"""What worlds did to a set of runs: hit rates, and how much of their paths agents shared.

Each sample row counts its observations by where they came from (``world_hits``,
``simulator_calls``, ``live_calls``). The **hit rate** is the share answered from the
world, per run, per agent and per environment. Agents run on one world share a path
where their calls (and everything before them) are equal: the **shared share** of an
agent is the fraction of its answered calls whose world key another agent's trajectory
also used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import Field

from occubench.analysis._dimensions import ALL
from occubench.analysis._metrics import MetricRow, agent_name, group
from occubench.results import SampleRow

WORLD_DIMENSIONS: dict[str, Callable[[SampleRow], str]] = {
    "run": lambda r: r.run_id,
    "agent": agent_name,
    "env": lambda r: r.env_name or "-",
}
"""The groups a hit rate is given for (each within one world)."""


class WorldUse(MetricRow):
    """Where one group's observations came from, within one world."""

    world: str = Field(description="The world (its path as the runs named it).")
    dimension: str = Field(description="run, agent or env ('all': every sample of the world).")
    group: str = Field(description="The run id, agent or environment ('all').")
    samples: int = Field(description="Samples.")
    observations: int = Field(description="Observations answered (calls that reached it).")
    world_hits: int = Field(description="Answered from the world.")
    simulator_calls: int = Field(description="Answered by the simulator (and recorded).")
    live_calls: int = Field(description="Answered live, not recorded (replay-live).")
    hit_rate: float = Field(description="world_hits / observations (NaN: none).")


class SharedPaths(MetricRow):
    """How much of one agent's paths in one world other agents also took."""

    world: str = Field(description="The world.")
    agent: str = Field(description="The agent.")
    observations: int = Field(description="Its answered calls with a world key.")
    shared: int = Field(description="Those whose key another agent's trajectory also used.")
    share: float = Field(description="shared / observations (NaN: none).")


def _rate(part: int, whole: int) -> float:
    return part / whole if whole else float("nan")


def world_use(rows: Sequence[SampleRow]) -> list[WorldUse]:
    """Hit rates per world: all its samples, then per run, agent and environment."""
    out = []
    for world, members in group([r for r in rows if r.world], lambda r: r.world or "").items():
        dimensions = [("all", lambda r: ALL), *WORLD_DIMENSIONS.items()]
        for dimension, key in dimensions:
            for name, part in group(members, key).items():
                hits = sum(r.world_hits for r in part)
                asked = sum(r.simulator_calls for r in part)
                live = sum(r.live_calls for r in part)
                total = hits + asked + live
                out.append(
                    WorldUse(
                        world=world,
                        dimension=dimension,
                        group=name,
                        samples=len(part),
                        observations=total,
                        world_hits=hits,
                        simulator_calls=asked,
                        live_calls=live,
                        hit_rate=_rate(hits, total),
                    )
                )
    return out


def shared_paths(rows: Sequence[SampleRow]) -> list[SharedPaths]:
    """Per world with two agents or more: each agent's share of calls others also made."""
    out = []
    for world, members in group([r for r in rows if r.world], lambda r: r.world or "").items():
        by_agent = {
            agent: [k for r in part for k in r.world_keys]
            for agent, part in group(members, agent_name).items()
        }
        if len(by_agent) < 2:
            continue
        for agent, keys in by_agent.items():
            others = {k for a, ks in by_agent.items() if a != agent for k in ks}
            shared = sum(k in others for k in keys)
            out.append(
                SharedPaths(
                    world=world,
                    agent=agent,
                    observations=len(keys),
                    shared=shared,
                    share=_rate(shared, len(keys)),
                )
            )
    return out

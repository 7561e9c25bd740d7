"""The verifier's floor: what a grading passes for agents that do no work.

``occubench floor`` runs the null agents (``occubench.scripted.NullAgent``) with a
simulator and a verifier and writes a ``FloorRecord``; ``occubench report --floor FILE``
shows, beside each leaderboard line, the floor measured under the same simulator,
verifier and protocol (``LineFloor``). See ``docs/guide/believe.md``, "The verifier's
floor".
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from occubench.analysis import NAN_AS_STRING, RateRow, rates_by
from occubench.errors import UsageError
from occubench.grading import combined_verdict
from occubench.protocols import Protocol
from occubench.results import SampleRow


class FloorRecord(BaseModel):
    """The null agents' pass rates on one dataset under one simulator and verifier."""

    model_config = NAN_AS_STRING

    dataset: str = Field(description="The dataset as given (a folder, or 'reference').")
    dataset_digest: str = Field(description="SHA-256 of the dataset folder's files.")
    simulator: str = Field(description="Simulator model.")
    verifier: str | None = Field(
        default=None,
        description="Verifier model (None: none was bound; the checks or the simulator judged).",
    )
    protocol: Protocol = Field(description="The protocol the runs followed.")
    task_ids: list[str] | None = Field(
        default=None,
        description="The tasks the null agents ran (None: not recorded; such a record is "
        "matched on the simulator, verifier and protocol alone).",
    )
    null_agents: list[RateRow] = Field(
        description="One rate per null agent; its group is the agent's model name."
    )
    verifier_alone: list[RateRow] = Field(
        default_factory=list,
        description="Per null agent, the share of its samples the verifier's majority passed, "
        "whatever the task's checks said (nan: no verifier voted, checks alone graded).",
    )

    def highest(self) -> RateRow:
        """The null agent the grading passed most often: the floor.

        Raises:
            ValueError: the record holds no null agent.
        """
        if not self.null_agents:
            raise ValueError("a floor record without null agents has no floor")
        return max(self.null_agents, key=lambda r: -1.0 if math.isnan(r.rate) else r.rate)

    def grading(self) -> str:
        """Who graded, in words (lower case: the middle of a sentence)."""
        if self.verifier:
            return f"the verifier {self.verifier}"
        return "the grading (no verifier bound: checks, or the simulator as judge)"

    def matches(
        self,
        simulator: str,
        verifier: str | None,
        protocol: str,
        tasks: Collection[str] | None = None,
    ) -> bool:
        """Whether this floor was measured under that simulator, verifier and protocol.

        With ``tasks`` (a line's task set), on those tasks too, when the record says.
        """
        if tasks is not None and self.task_ids is not None and set(self.task_ids) != set(tasks):
            return False
        return (self.simulator, self.verifier or None, self.protocol.value) == (
            simulator,
            verifier or None,
            protocol,
        )


def floor_record(rows: Sequence[SampleRow], dataset: str, digest: str) -> FloorRecord:
    """The floor record of the null agents' samples (one simulator, verifier, protocol).

    Raises:
        UsageError: no rows, or rows of several simulators, verifiers or protocols.
    """
    settings = {(r.simulator_model or "", r.verifier_model or None, r.protocol) for r in rows}
    if len(settings) != 1:
        raise UsageError(
            f"a floor needs runs of one simulator, verifier and protocol; got {len(settings)}"
        )
    ((simulator, verifier, protocol),) = settings
    return FloorRecord(
        dataset=dataset,
        dataset_digest=digest,
        simulator=simulator,
        verifier=verifier,
        protocol=protocol,
        task_ids=sorted({str(r.task_id) for r in rows}),
        null_agents=rates_by(rows, lambda r: r.agent_model),
        verifier_alone=rates_by([_judged(r) for r in rows], lambda r: r.agent_model),
    )


def _judged(row: SampleRow) -> SampleRow:
    """The row as the verifier's votes alone graded it (no verdict: no vote was cast).

    The combination rule with the checks left out (``grading.combined_verdict``). An
    errored row stays as it is; a row graded by checks alone is not counted.
    """
    if not row.votes_total or row.votes_yes is None:
        return row.model_copy(update={"passed": None})
    return row.model_copy(
        update={"passed": combined_verdict(None, None, row.votes_yes, row.votes_total)}
    )


def load_floor(path: Path) -> FloorRecord:
    """A floor record written by ``occubench floor --out``.

    Raises:
        UsageError: not a floor record.
        FileNotFoundError: no such file.
    """
    try:
        return FloorRecord.model_validate_json(path.read_bytes())
    except ValueError as e:
        raise UsageError(f"{path} is not a floor record (occubench floor --out): {e}") from None


class LineFloor(BaseModel):
    """The floor beside one leaderboard line (``report --floor``)."""

    model_config = NAN_AS_STRING

    agent: str = Field(description="The line's agent.")
    simulator: str = Field(description="The line's simulator.")
    floor: RateRow | None = Field(
        description="The highest null agent's rate under the same simulator, verifier and "
        "protocol (its group names it); None: not measured."
    )


def floors_beside(
    simulators: Sequence[tuple[str, str]],
    verifier: str | None,
    protocol: str,
    records: Sequence[FloorRecord],
    tasks: Collection[str] | None = None,
) -> list[LineFloor]:
    """The floor of each (agent, simulator) line graded by ``verifier`` under ``protocol``.

    With ``tasks`` (the lines' task set), only a record of those tasks matches (or one
    that does not say its tasks). Of several matching records the last given is taken.
    """
    lines = []
    for agent, simulator in simulators:
        found = [f for f in records if f.matches(simulator, verifier, protocol, tasks)]
        floor = found[-1].highest() if found else None
        lines.append(LineFloor(agent=agent, simulator=simulator, floor=floor))
    return lines

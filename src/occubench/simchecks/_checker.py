"""Online simulator checks: the audit's rules applied to each observation as it arrives.

One ``ObservationChecker`` follows one sample. Every observation the simulator gives is
checked against what the sample knows at that moment, and only the observation the
sample keeps enters that knowledge (``record``). Four kinds of check (``SimCheckKind``):

- ``schema``: the observation (not a structured error) shares less than
  ``DEFAULT_SIM_CHECK_MIN_SCHEMA`` of its key paths with the tool's object
  ``example_output`` (Jaccard index, the audit's schema rule).
- ``initial_state``: before the first write call of the sample, a read contradicts the
  initial state: an entity of the state answered with an error, a list of a state
  collection missing records (the audit's omission rule), or a value of a state entity
  changed (``contradictions``).
- ``consistency``: a read contradicts an earlier observation with no write call in
  between: the same call answered differently (the audit's determinism rule), or a value
  of an entity seen earlier changed.
- ``fabrication``: a read's ids come from no config, argument or earlier write call (the
  audit's fabrication rule).

A write call (a tool whose name does not start with a read verb, see ``is_read_tool``) may
change anything: from then on the initial state is not compared any more, the memory of
earlier reads starts again from the write's own observation, and the ids it returns count
as created. Calls that failed before reaching the simulator (explicit faults) are not
observations and change nothing.
"""

from __future__ import annotations

import json
from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from occubench.dataset import EnvConfig
from occubench.defaults import DEFAULT_SIM_CHECK_MIN_SCHEMA
from occubench.simchecks._extract import (
    id_values,
    is_error,
    is_id_key,
    is_read_tool,
    known_values,
    record_collections,
    state_scalars,
)
from occubench.simchecks._rules import (
    Facts,
    Finding,
    call_text,
    contradictions,
    entity_facts,
    fabrication,
    omission,
    same_answer,
    schema_match,
)


class SimCheckKind(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What an online check compares an observation with (module doc)."""

    SCHEMA = "schema"
    INITIAL_STATE = "initial_state"
    CONSISTENCY = "consistency"
    FABRICATION = "fabrication"


class CheckFailure(BaseModel):
    """One kind of check an observation failed."""

    kind: SimCheckKind = Field(description="Which check.")
    detail: str = Field(description="What did not hold, quoting the values.")


class KeptAnswer(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Which answer to a checked call the sample kept."""

    FIRST = "first"
    """The simulator's first answer (the re-ask was unusable or failed more checks)."""
    REASK = "reask"
    """The answer to the re-ask that named the problem."""


class SimCheck(BaseModel):
    """The online checks of one observation whose first answer failed (``SimStep.check``).

    NaN and Infinity in the rejected answer are logged as JSON's constants, as ``SimStep``'s.
    """

    model_config = ConfigDict(ser_json_inf_nan="constants")

    failures: list[CheckFailure] = Field(description="Checks the first answer failed.")
    reask_model: str = Field(description="Model re-asked: the simulator or its fallback.")
    reask_failures: list[CheckFailure] | None = Field(
        default=None,
        description="Checks the re-asked answer failed (None: the re-ask gave no usable answer).",
    )
    kept: KeptAnswer = Field(description="The answer the sample kept.")
    rejected: dict[str, Any] | None = Field(
        default=None, description="The answer not kept (None when the re-ask was unusable)."
    )
    suspect: bool = Field(description="The kept answer failed a check.")

    def kept_failures(self) -> list[CheckFailure]:
        """The checks the kept answer failed (the first answer's when the re-ask gave none)."""
        if self.kept is KeptAnswer.REASK and self.reask_failures:
            return self.reask_failures
        return self.failures


def _call_key(tool: str, arguments: dict[str, Any]) -> str:
    return json.dumps([tool, arguments], sort_keys=True, ensure_ascii=False, default=str)


class ObservationChecker:
    """The online checks of one sample's observations (module doc).

    Args:
        env: The sample's environment.
        min_schema: The key-path Jaccard index below which an observation fails ``schema``.
    """

    def __init__(self, env: EnvConfig, *, min_schema: float = DEFAULT_SIM_CHECK_MIN_SCHEMA):
        self.min_schema = min_schema
        self._examples = {t.name: t.example_output for t in env.action_set_definitions}
        self._known = known_values(env)
        self._state = list(record_collections(env.task_initial_state))
        self._state_ids = {str(v) for k, v in state_scalars(env.task_initial_state) if is_id_key(k)}
        self._initial: Facts = entity_facts(env.task_initial_state)
        self._seen: Facts = {}
        self._reads: dict[str, dict[str, Any]] = {}
        self._written = False

    def check(
        self, tool: str, arguments: dict[str, Any], obs: dict[str, Any]
    ) -> list[CheckFailure]:
        """The checks ``obs`` fails, one entry per kind (nothing is remembered)."""
        found: dict[SimCheckKind, list[str]] = {}

        def fail(kind: SimCheckKind, finding: Finding | None) -> None:
            if finding is not None and finding.value < 1:
                found.setdefault(kind, []).append(finding.detail)

        where = call_text(tool, arguments)
        error = is_error(obs)
        if not error:
            schema = schema_match(tool, obs, self._examples.get(tool))
            if schema is not None and schema.value < self.min_schema:
                fail(SimCheckKind.SCHEMA, schema.model_copy(update={"value": 0.0}))
        if is_read_tool(tool):
            if not self._written:
                fail(
                    SimCheckKind.INITIAL_STATE,
                    omission(tool, arguments, obs, self._state, self._state_ids),
                )
                self._contradicts(SimCheckKind.INITIAL_STATE, self._initial, where, obs, found)
            earlier = self._reads.get(_call_key(tool, arguments))
            if earlier is not None:
                fail(SimCheckKind.CONSISTENCY, same_answer(tool, arguments, earlier, obs))
            if SimCheckKind.CONSISTENCY not in found:
                self._contradicts(SimCheckKind.CONSISTENCY, self._seen, where, obs, found)
            if not error:
                fail(SimCheckKind.FABRICATION, fabrication(tool, arguments, obs, self._known))
        return [CheckFailure(kind=k, detail="; ".join(v)) for k, v in found.items()]

    @staticmethod
    def _contradicts(
        kind: SimCheckKind,
        known: Facts,
        where: str,
        obs: dict[str, Any],
        found: dict[SimCheckKind, list[str]],
    ) -> None:
        changed = contradictions(known, obs)
        if changed:
            more = f" (+{len(changed) - 3} more)" if len(changed) > 3 else ""
            found.setdefault(kind, []).append(f"{where}: {'; '.join(changed[:3])}{more}")

    def record(self, tool: str, arguments: dict[str, Any], obs: dict[str, Any]) -> None:
        """Remember the observation the sample kept (module doc: writes start afresh)."""
        if not is_read_tool(tool):
            self._written = True
            self._known.update(value for _, value in id_values(obs))
            self._reads.clear()
            self._seen = {}
        else:
            self._reads[_call_key(tool, arguments)] = obs
        for identity, facts in entity_facts(obs).items():
            self._seen.setdefault(identity, {}).update(facts)

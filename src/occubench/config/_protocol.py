"""Protocols: named presets that set every point where a run can follow the paper or not.

``paper`` (the default) runs what the public OccuBench release's harness runs, point by
point (``docs/protocol.md`` and ``../shared/PAPER_PROTOCOL.md``): its agent, simulator and
verifier messages, raw tool arguments, 200 model turns and its stop rules, no reasoning
carried across turns, its token limits, fault rules in the simulator's prompt, and
completion rates over all tasks (a broken run is a failed task). ``occubench`` is our
hardened measurement: faults placed and logged by code, tool arguments validated against
the schema, infrastructure errors counted apart.

A run's configuration names a protocol and may override any single point: the
``ProtocolOverrides`` fields, generated from ``ProtocolPoints`` (one field per point, None:
the protocol's value). ``resolve_points`` gives every point's value, which the log records.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from occubench.defaults import DEFAULT_MAX_TOOL_CALLS, DEFAULT_SIMULATOR_RETRIES
from occubench.faults import FaultEngine
from occubench.protocols import MessageStyle, Protocol


class ProtocolPoints(BaseModel):
    """Every protocol point, resolved (what a run actually does)."""

    model_config = ConfigDict(extra="forbid")

    fault_engine: FaultEngine = Field(
        description="code: a seeded plan, faults made and logged by code; prompt: fault "
        "rules appended to the simulator's prompt, the simulator places them (the paper)."
    )
    validate_tool_args: bool = Field(
        description="Check the agent's tool arguments against the schema before the "
        "simulator is asked; the paper passes the raw argument string to the simulator."
    )
    max_turns: int = Field(ge=0, description="Model turns of the agent at most (0: no cap).")
    max_tool_calls: int = Field(ge=0, description="Tool calls of the agent at most (0: no cap).")
    stop_on_finish: bool = Field(
        description="A turn whose finish reason is 'stop' ends the loop after its tool calls "
        "(the release's rule, the finish reason read as the release's wire reports it: a "
        "tool-call turn reports 'tool_calls' on a native wire); otherwise only a turn "
        "without tool calls ends it."
    )
    carry_reasoning: bool = Field(
        description="Keep the agent's reasoning content in its history across turns; the "
        "release rebuilds assistant messages from content and tool calls only (keeping "
        "the reasoning the model's wire needs to accept the next turn)."
    )
    agent_errors_end_loop: bool = Field(
        description="An agent API failure (after retries) ends the loop and what exists is "
        "graded (the release); otherwise it errors the sample (infrastructure)."
    )
    agent_max_tokens: int = Field(ge=0, description="max_tokens of agent calls (0: not set).")
    simulator_max_tokens: int = Field(
        ge=0, description="max_tokens of simulator calls (0: not set)."
    )
    verifier_max_tokens: int = Field(ge=0, description="max_tokens of verifier calls (0: not set).")
    simulator_retries: int = Field(
        ge=0, description="Re-asks of the simulator for a reply without a usable observation."
    )
    pass_raw_observation: bool = Field(
        description="When no attempt parses, pass the last raw reply on as the observation "
        "(logged as a parse failure; the release never fails a sample on the simulator); "
        "otherwise the sample errors (infrastructure)."
    )
    agent_messages: MessageStyle = Field(description="Layout of the agent's prompt.")
    simulator_messages: MessageStyle = Field(
        description="Layout of the simulator's messages, tags and format instructions."
    )
    verifier_messages: MessageStyle = Field(
        description="Layout of the verifier's request and how its verdict is read."
    )
    error_hints: bool = Field(
        description="Code-engine error bodies advise a retry (retryable, retry after, try "
        "again later); the paper's error bodies give none."
    )
    errors_count_as_failures: bool = Field(
        description="Completion rates count an errored sample as a failed task (the paper: "
        "CR over all tasks); otherwise errors are counted apart."
    )
    sim_checks: bool = Field(
        description="Check every observation as it arrives (schema, initial state, earlier "
        "observations, fabricated ids), re-ask once on a failure and mark samples that kept "
        "a failed one simulator-suspect; occubench checks, the release checks nothing."
    )


PRESETS: dict[Protocol, ProtocolPoints] = {
    Protocol.PAPER: ProtocolPoints(
        fault_engine=FaultEngine.PROMPT,
        validate_tool_args=False,
        max_turns=200,
        max_tool_calls=0,
        stop_on_finish=True,
        carry_reasoning=False,
        agent_errors_end_loop=True,
        agent_max_tokens=12288,
        simulator_max_tokens=12288,
        verifier_max_tokens=4096,
        simulator_retries=9,
        pass_raw_observation=True,
        agent_messages=MessageStyle.PAPER,
        simulator_messages=MessageStyle.PAPER,
        verifier_messages=MessageStyle.PAPER,
        error_hints=False,
        errors_count_as_failures=True,
        sim_checks=False,
    ),
    Protocol.OCCUBENCH: ProtocolPoints(
        fault_engine=FaultEngine.CODE,
        validate_tool_args=True,
        max_turns=0,
        max_tool_calls=DEFAULT_MAX_TOOL_CALLS,
        stop_on_finish=False,
        carry_reasoning=True,
        agent_errors_end_loop=False,
        agent_max_tokens=0,
        simulator_max_tokens=0,
        verifier_max_tokens=0,
        simulator_retries=DEFAULT_SIMULATOR_RETRIES,
        pass_raw_observation=False,
        agent_messages=MessageStyle.OCCUBENCH,
        simulator_messages=MessageStyle.OCCUBENCH,
        verifier_messages=MessageStyle.OCCUBENCH,
        error_hints=False,
        errors_count_as_failures=False,
        sim_checks=True,
    ),
}
"""The presets: every point has a value in each (``tests/config/test_protocol.py``)."""


OVERRIDE_NOTE = "(default: the protocol's)"
"""How an override's description ends: its None leaves the point to the protocol."""


def _overrides_model() -> type[BaseModel]:
    """One optional field per protocol point: its type or None, its bounds, its description."""
    fields: dict[str, Any] = {}  # create_model's field definitions: (type, FieldInfo)
    for name, point in ProtocolPoints.model_fields.items():
        annotation: Any = point.annotation
        optional: Any = annotation | None
        if point.metadata:  # the point's bounds (ge=0) hold for an override too
            optional = Annotated[(optional, *point.metadata)]
        described = f"{point.description} {OVERRIDE_NOTE}"
        fields[name] = (optional, Field(default=None, description=described))
    return create_model(
        "ProtocolOverrides",
        __config__=ConfigDict(extra="forbid"),
        __doc__="A run's choice for each protocol point (None: the protocol's value).",
        __module__=__name__,
        **fields,
    )


if TYPE_CHECKING:

    class ProtocolOverrides(BaseModel):
        """A run's choice for each protocol point (None: the protocol's value).

        Generated from ``ProtocolPoints`` at import; its fields are read by name
        (``RunConfig.overrides``), so type checkers need not know them.
        """

else:
    ProtocolOverrides = _overrides_model()


def resolve_points(
    protocol: Protocol, overrides: Mapping[str, object], *, simulator_places_faults: bool
) -> ProtocolPoints:
    """Every protocol point's value: the protocol's preset, then the points a run sets itself.

    One rule follows: the online simulator checks, when left to the protocol, are off if
    the simulator places the faults (``fault_engine=prompt`` with E1-E3 events,
    ``simulator_places_faults``): the faults it is told to make would fail them. A run
    that asks for both explicitly is refused by ``RunConfig``.
    """
    points = PRESETS[protocol].model_copy(update=dict(overrides))
    if "sim_checks" not in overrides and points.fault_engine is FaultEngine.PROMPT:
        if simulator_places_faults:
            points = points.model_copy(update={"sim_checks": False})
    return points

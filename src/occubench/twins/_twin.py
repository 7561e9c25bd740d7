"""The twin interface: one environment implemented as code, exactly as its config reads.

A twin starts from the config's initial state (``reset``) and answers each tool call
(``call``) as a function of the state and the arguments: the observation, which of its
fields the config leaves open (*free*: the twin chose them deterministically, nothing
compares them), and the state change the call made. A call may also set state fields to
values the config leaves open (``Answer.free_state``): they stay free, and out of every
state comparison, until a call sets them from the config again (``Answer.fixed_state``).
Everything not marked free is *determined* by the config and is what a simulator is held
to.

A twin is a subclass of ``Twin`` naming its environment (``environment``) with one method
per tool, each marked ``@tool``: the method takes the call's arguments (already checked
against the tool's JSON schema) and returns an ``Answer``. Unknown tools and arguments
that break the schema get the config's error (``error``, which a twin overrides when its
config words errors its own way).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from enum import StrEnum
from typing import Any, ClassVar, TypeVar

import jsonschema
from pydantic import BaseModel, ConfigDict, Field

from occubench.dataset import EnvConfig, ToolSpec
from occubench.simchecks import is_error


class FieldKind(StrEnum):
    """Whether the config fixes an observation field's value."""

    DETERMINED = "determined"
    FREE = "free"


class Outcome(StrEnum):
    """How a tool call ended."""

    SUCCESS = "success"
    ERROR = "error"


class ChangeKind(StrEnum):
    """What a call did to one state field."""

    ADDED = "added"
    REMOVED = "removed"
    CHANGED = "changed"


class StateChange(BaseModel):
    """One state field a call added, removed or changed (``path`` a JSON Pointer)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="JSON Pointer of the field in the state.")
    kind: ChangeKind
    before: Any = Field(default=None, description="The value before (None when added).")
    after: Any = Field(default=None, description="The value after (None when removed).")


class Answer(BaseModel):
    """What a tool method returns: the observation and the pointers of its free parts."""

    model_config = ConfigDict(extra="forbid")

    observation: dict[str, Any]
    free: list[str] = Field(
        default_factory=list,
        description="JSON Pointers into the observation whose whole value the config leaves "
        "open (a pointer marks everything under it).",
    )
    free_state: list[str] = Field(
        default_factory=list,
        description="JSON Pointers into the state that this call set to values the config "
        "leaves open (they stay free until a later call sets them from the config).",
    )
    fixed_state: list[str] = Field(
        default_factory=list,
        description="JSON Pointers into the state that this call set from the config again.",
    )


class TwinStep(BaseModel):
    """One call answered by a twin."""

    model_config = ConfigDict(extra="forbid")

    tool: str
    arguments: dict[str, Any]
    outcome: Outcome
    observation: dict[str, Any]
    free: list[str] = Field(default_factory=list, description="As in ``Answer``.")
    changes: list[StateChange] = Field(
        default_factory=list, description="The state fields the call changed."
    )
    free_state: list[str] = Field(
        default_factory=list,
        description="After the call, the JSON Pointers of the state the config leaves open "
        "(values the twin chose; a state comparison skips them).",
    )

    def marking(self) -> dict[str, FieldKind]:
        """Every leaf of the observation (JSON Pointer) with whether it is determined."""
        return {
            path: FieldKind.FREE if is_under(path, self.free) else FieldKind.DETERMINED
            for path, _ in leaves(self.observation)
        }


_Method = TypeVar("_Method", bound=Callable[..., Answer])


def tool(method: _Method) -> _Method:
    """Mark a twin method as the tool of the same name."""
    method.__dict__["_twin_tool"] = True
    return method


class Twin:
    """An environment as code (module doc). Subclasses set ``environment`` and tools."""

    environment: ClassVar[str] = ""
    """The ``environment_name`` of the config this twin implements."""

    def __init__(self, env: EnvConfig) -> None:
        if env.environment_name != self.environment:
            raise ValueError(f"twin of {self.environment!r} given env {env.environment_name!r}")
        self.env = env
        self.specs: dict[str, ToolSpec] = {t.name: t for t in env.action_set_definitions}
        missing = sorted(set(self.specs) - set(self.tool_names()))
        if missing:
            raise TypeError(f"twin of {self.environment!r} lacks tools: {', '.join(missing)}")
        self.state: dict[str, Any] = {}
        self.steps: list[TwinStep] = []
        self.free_state: set[str] = set()
        self.reset()

    @classmethod
    def tool_names(cls) -> list[str]:
        """The tools this twin implements."""
        return [name for name in dir(cls) if getattr(getattr(cls, name, None), "_twin_tool", False)]

    def reset(self, state: dict[str, Any] | None = None) -> None:
        """Start again from the config's initial state (or from ``state``, all determined)."""
        self.state = copy.deepcopy(self.env.task_initial_state if state is None else state)
        self.steps = []
        self.free_state = set()

    def call(self, tool_name: str, arguments: dict[str, Any]) -> TwinStep:
        """Answer one call, keeping the state change it made."""
        before = copy.deepcopy(self.state)
        answer = self._answer(tool_name, copy.deepcopy(arguments))
        self.free_state = (self.free_state - set(answer.fixed_state)) | set(answer.free_state)
        step = TwinStep(
            tool=tool_name,
            arguments=arguments,
            outcome=Outcome.ERROR if is_error(answer.observation) else Outcome.SUCCESS,
            observation=answer.observation,
            free=answer.free,
            changes=state_changes(before, self.state),
            free_state=sorted(self.free_state),
        )
        self.steps.append(step)
        return step

    def run(self, calls: Iterable[tuple[str, dict[str, Any]]]) -> list[TwinStep]:
        """Answer calls in order from the current state."""
        return [self.call(name, arguments) for name, arguments in calls]

    def _answer(self, tool_name: str, arguments: dict[str, Any]) -> Answer:
        spec = self.specs.get(tool_name)
        if spec is None:
            return self.unknown_tool(tool_name)
        problem = schema_problem(spec, arguments)
        if problem is not None:
            return self.invalid_arguments(tool_name, problem)
        method: Callable[[dict[str, Any]], Answer] = getattr(self, tool_name)
        return method(arguments)

    # The config's errors: twins override these where their config words them otherwise.

    def error(self, message: str, code: str | None = None) -> Answer:
        """A structured error observation (the config's error shape)."""
        body: dict[str, Any] = {"error": message}
        if code is not None:
            body["code"] = code
        return Answer(observation=body)

    def unknown_tool(self, tool_name: str) -> Answer:
        """The answer to a call of a tool the environment does not have."""
        return self.error(f"Unknown action: {tool_name}", code="UNKNOWN_ACTION")

    def invalid_arguments(self, tool_name: str, problem: str) -> Answer:
        """The answer to arguments that break the tool's parameter schema."""
        return self.error(
            f"Invalid parameters for {tool_name}: {problem}", code="INVALID_PARAMETERS"
        )


def schema_problem(spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
    """Why ``arguments`` break the tool's parameter schema (None: they fit)."""
    schema = spec.parameters or {"type": "object"}
    try:
        error = jsonschema.exceptions.best_match(
            jsonschema.Draft202012Validator(schema).iter_errors(arguments)
        )
    except (jsonschema.exceptions.SchemaError, TypeError):
        return None  # a schema the validator cannot read constrains nothing here
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"{where}: {error.message}" if where else error.message


def pointer_token(key: str) -> str:
    """A key as one JSON Pointer token (``~`` and ``/`` escaped, RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a JSON value as (JSON Pointer, value); empty containers are leaves."""
    if isinstance(value, dict) and value:
        for key, item in value.items():
            yield from leaves(item, f"{path}/{pointer_token(str(key))}")
    elif isinstance(value, list) and value:
        for index, item in enumerate(value):
            yield from leaves(item, f"{path}/{index}")
    else:
        yield path, value


def is_under(path: str, prefixes: Sequence[str]) -> bool:
    """Whether a JSON Pointer is one of ``prefixes`` or lies under one of them."""
    return any(path == p or path.startswith(p.rstrip("/") + "/") or p == "" for p in prefixes)


def state_changes(before: Any, after: Any, path: str = "") -> list[StateChange]:
    """The leaf fields that differ between two states, as changes (lists by index)."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[StateChange] = []
        for key in list(before) + [k for k in after if k not in before]:
            where = f"{path}/{pointer_token(str(key))}"
            if key not in after:
                out.append(StateChange(path=where, kind=ChangeKind.REMOVED, before=before[key]))
            elif key not in before:
                out.append(StateChange(path=where, kind=ChangeKind.ADDED, after=after[key]))
            else:
                out += state_changes(before[key], after[key], where)
        return out
    if isinstance(before, list) and isinstance(after, list):
        out = []
        for index in range(max(len(before), len(after))):
            where = f"{path}/{index}"
            if index >= len(after):
                out.append(StateChange(path=where, kind=ChangeKind.REMOVED, before=before[index]))
            elif index >= len(before):
                out.append(StateChange(path=where, kind=ChangeKind.ADDED, after=after[index]))
            else:
                out += state_changes(before[index], after[index], where)
        return out
    if _same(before, after):
        return []
    return [StateChange(path=path, kind=ChangeKind.CHANGED, before=before, after=after)]


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)

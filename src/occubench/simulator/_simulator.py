"""The Language Environment Simulator: an LLM answers each tool call with an observation."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, NamedTuple

from inspect_ai.log._samples import sample_active
from inspect_ai.model import ChatMessage, ChatMessageAssistant, GenerateConfig, Model, ModelOutput
from pydantic import BaseModel, ConfigDict, Field

from occubench.calls import Asked, ask
from occubench.defaults import DEFAULT_SIMULATOR_RETRIES
from occubench.errors import ErrorSource, InfrastructureError
from occubench.simchecks import CheckFailure, KeptAnswer, ObservationChecker, SimCheck
from occubench.simulator._layout import OccubenchLayout, SimulatorLayout, system_message
from occubench.simulator._prompt import failed_observation, reask_action
from occubench.simulator._state import PatchError, apply_reply_patch
from occubench.simulator._world import WorldMiss, WorldUse, model_author
from occubench.worlds import (
    RAW_ARGUMENTS,
    Answer,
    ObservationSource,
    PathStep,
    Provenance,
    World,
    WorldContext,
    WorldEntry,
    WorldMode,
    entry_key,
)


def _problem(failures: list[CheckFailure]) -> str:
    """The re-ask's ``harness_check``: every failed check, named."""
    return "; ".join(f"{f.kind.value} check failed: {f.detail}" for f in failures)


class SimulatorError(InfrastructureError):
    """The simulator gave no usable observation: an infrastructure error, not an agent failure."""

    source = ErrorSource.SIMULATOR


class Observation(BaseModel):
    """What the simulator answered one action with."""

    value: Any = Field(description="The observation's JSON value (None: the reply had none).")
    text: str = Field(description="The observation as the agent sees it.")
    parse_failed: bool = Field(
        default=False,
        description="No attempt parsed and the last raw reply was passed on (pass_raw).",
    )


class SimStep(BaseModel):
    """One action and what the simulator's history holds for it (``Episode.steps``).

    A simulator may answer NaN or Infinity; the log writes them as JSON's extension
    constants (``NaN``), as it does in a plain dict, not as null.
    """

    model_config = ConfigDict(ser_json_inf_nan="constants")

    tool: str = Field(description="Action name.")
    arguments: dict[str, Any] = Field(description="Action arguments (parsed).")
    raw_arguments: str | None = Field(
        default=None, description="The agent's raw argument string, when it was passed on."
    )
    observation: Any = Field(
        default=None,
        description="Clean observation, or the error if failed (None: no reply parsed, "
        "``parse_failed``).",
    )
    text: str | None = Field(default=None, description="The observation's text in the history.")
    failed: bool = Field(default=False, description="Failed before reaching the environment.")
    parse_failed: bool = Field(
        default=False, description="No reply parsed; the last raw reply was passed on."
    )
    attempts: int = Field(
        default=1,
        description="Simulator calls it took (re-asks included; 0: answered from a world).",
    )
    patch: list[dict[str, Any]] | None = Field(
        default=None, description="Explicit state mode: the JSON Patch the step applied."
    )
    state: dict[str, Any] | None = Field(
        default=None, description="Explicit state mode: the state after the step."
    )
    check: SimCheck | None = Field(
        default=None,
        description="Online simulator checks: the checks the first answer failed and what "
        "the re-ask gave (None: checks off, or every check passed).",
    )
    source: ObservationSource | None = Field(
        default=None,
        description="Where the observation came from: world, simulator or live (None: the "
        "call failed before reaching the simulator).",
    )
    key: str | None = Field(
        default=None,
        description="The world key of the call (its context and path; None without a world).",
    )


class Reading(NamedTuple):
    """A usable reply, read: its observation, and in explicit state mode its state patch."""

    value: Any
    """The observation's JSON value."""
    text: str
    """The observation as the agent sees it."""
    patch: list[dict[str, Any]] | None = None
    """Explicit state mode: the reply's JSON Patch (None: history mode)."""
    state: dict[str, Any] | None = None
    """Explicit state mode: the state after the patch (None: history mode)."""


class _Checked(NamedTuple):
    """What the online checks made of an answer (``Simulator._checked``)."""

    reading: Reading
    """The answer kept: the first, or the re-ask's."""
    check: SimCheck | None
    """The record of the checks (None: every check passed)."""
    reasks: int
    """Model calls the re-ask took."""
    outputs: list[ModelOutput]
    """The re-ask's model outputs (none without one)."""


def _checkable(value: Any) -> dict[str, Any]:
    """An observation as the online checks read it (a bare JSON value wrapped)."""
    return value if isinstance(value, dict) else {"value": value}


class Simulator:
    """Simulates one environment for one sample, with its history as the state.

    With a world (``use_world``), each call is looked up first by the key of its path;
    a recorded answer is applied to the history as a live one would be, and only a
    path the world does not hold asks the model (``WorldMode``).

    Args:
        model: The ``simulator`` role model.
        system_prompt: The rendered system prompt (``layout.system_prompt``).
        layout: How the simulator is asked and read (default: occubench's).
        max_retries: Re-asks (or re-samples, per the layout) when a reply holds no usable
            observation (or, in explicit state mode, no patch that applies).
        pass_raw: When every attempt fails, pass the last raw reply on as the
            observation (or ``{}`` without one) instead of raising ``SimulatorError``.
        cache: Let Inspect cache simulator responses.
        state: The initial state, for explicit state mode (None: history mode). The
            system prompt must then include ``STATE_CONTRACT``.
        checker: Online checks of every observation (None: off). The system prompt must
            then include ``SIM_CHECK_CONTRACT``. An observation that fails a check is
            re-asked once with the problem named; the re-ask's answer is kept unless it is
            unusable or fails more kinds of check than the first.
        check_model: The model re-asked after a failed check (None: this simulator).
        config: Generate settings of every call (max_tokens, the simulator's seed).
    """

    def __init__(
        self,
        model: Model,
        system_prompt: str,
        *,
        layout: SimulatorLayout | None = None,
        max_retries: int = DEFAULT_SIMULATOR_RETRIES,
        pass_raw: bool = False,
        cache: bool = False,
        state: dict[str, Any] | None = None,
        checker: ObservationChecker | None = None,
        check_model: Model | None = None,
        config: GenerateConfig | None = None,
    ) -> None:
        self.model = model
        self.system_prompt = system_prompt
        self.layout = layout or OccubenchLayout()
        self.max_retries = max_retries
        self.pass_raw = pass_raw
        self.cache = cache
        self.state = state
        self.explicit = state is not None
        """Explicit state mode (the state is a JSON document patched by each answer)."""
        self.checker = checker
        self.check_model = check_model
        self.config = config or GenerateConfig()
        self.checked = 0
        """Observations the online checks looked at."""
        self.steps: list[SimStep] = []
        self.world: WorldUse | None = None
        """The world answers are looked up in and recorded to (``use_world``)."""
        self._path: list[PathStep] = []
        self._messages: list[ChatMessage] = [system_message(system_prompt)]

    def use_world(
        self, world: World, context: WorldContext, mode: WorldMode, *, task: str = ""
    ) -> str:
        """Answer from ``world`` from now on; the context's digest.

        Args:
            world: The world (open writable for ``record``).
            context: This simulator's context (``world_context``).
            mode: ``record``: record what the world lacks; ``replay``: never ask the
                model; ``replay-live``: ask the model for what it lacks, not recorded.
            task: The task named when a replay meets an unrecorded path.

        Raises:
            ValueError: a world already in use, steps already taken, or ``record`` on a
                read-only world.
        """
        if self.world is not None or self.steps:
            raise ValueError("a world is bound before the first step, once")
        if mode is WorldMode.RECORD:
            digest = world.add_context(context)
        else:
            digest = context.digest()
        self.world = WorldUse(world=world, mode=mode, context_digest=digest, task=task)
        return digest

    @property
    def path(self) -> list[PathStep]:
        """The steps taken so far as a world keys them."""
        return list(self._path)

    def key(self, tool: str, arguments: dict[str, Any], raw_arguments: str | None = None) -> str:
        """The world key of a call after the steps taken so far (a world must be in use)."""
        if self.world is None:
            raise ValueError("no world in use: a key needs its context")
        call = _path_step(arguments, tool, raw_arguments)
        return entry_key(self.world.context_digest, self._path, call)

    async def observe(
        self, tool: str, arguments: dict[str, Any], raw_arguments: str | None = None
    ) -> Observation:
        """The observation of one action (the world's, or the simulator's), added to the history.

        Args:
            tool: The action's name.
            arguments: Its arguments, parsed.
            raw_arguments: The agent's own argument string, when the protocol passes it
                on unchanged (the paper's layout shows it to the simulator).

        Raises:
            SimulatorError: when every attempt's reply is unusable and ``pass_raw`` is off.
            WorldMiss: a replay (``replay`` mode) met a path the world does not hold, or a
                recorded answer that cannot be applied.
        """
        action = self.layout.action_text(tool, arguments, raw_arguments)
        use = self.world
        if use is None:
            step, _ = await self._ask(tool, arguments, raw_arguments, action)
            return self._commit(step, action, raw_arguments)
        call = _path_step(arguments, tool, raw_arguments)
        key = entry_key(use.context_digest, self._path, call)
        if use.mode is WorldMode.RECORD:
            made: list[SimStep] = []

            async def make() -> WorldEntry:
                step, outputs = await self._ask(tool, arguments, raw_arguments, action)
                made.append(step)
                return self._entry(use.context_digest, call, step, outputs)

            answer: Answer = await use.world.answer(key, make)
            if answer.source is ObservationSource.SIMULATOR:
                return self._commit(made[-1].model_copy(update={"key": key}), action, raw_arguments)
            return self._apply(answer.entry, tool, arguments, raw_arguments, action)
        found = use.world.lookup(key)
        if found is not None:
            return self._apply(found, tool, arguments, raw_arguments, action)
        if use.mode is WorldMode.REPLAY:
            raise WorldMiss(
                f"task {use.task or '?'}: step {len(self.steps) + 1} ({tool!r}) is not in the "
                f"world {use.world.path} (key {key[:16]}...): a replay never asks the simulator"
            )
        step, _ = await self._ask(tool, arguments, raw_arguments, action)
        live = step.model_copy(update={"source": ObservationSource.LIVE, "key": key})
        return self._commit(live, action, raw_arguments)

    def apply_entry(self, entry: WorldEntry) -> Observation:
        """Add a recorded answer to the history exactly as the live answer was added.

        The call is the entry's (its canonical arguments; raw text as the action's
        argument string). With a world in use the entry must answer the next call of this
        simulator's path; earlier steps that failed before reaching the simulator are
        ``record_failure``'s.

        Raises:
            ValueError: the entry is not the next step of this simulator's path.
            WorldMiss: its check record is not one.
        """
        arguments = dict(entry.call.arguments)
        raw = arguments.pop(RAW_ARGUMENTS, None) if set(arguments) == {RAW_ARGUMENTS} else None
        if self.world is not None:
            key = entry_key(self.world.context_digest, self._path, entry.call)
            if key != entry.key:
                raise ValueError(
                    f"entry {entry.key[:16]}... does not answer the next call of this path"
                )
        action = self.layout.action_text(entry.call.tool, arguments, raw)
        return self._apply(entry, entry.call.tool, arguments, raw, action)

    def _entry(
        self, context_digest: str, call: PathStep, step: SimStep, outputs: list[ModelOutput]
    ) -> WorldEntry:
        """The world entry of a live answer (made by this simulator's model)."""
        source, author = model_author(self.model)
        return WorldEntry.record(
            context_digest,
            self._path,
            call,
            text=step.text or "",
            author=author,
            source=source,
            observation=step.observation,
            parse_failed=step.parse_failed,
            patch=step.patch,
            state=step.state if self.explicit else None,
            check=None if step.check is None else step.check.model_dump(mode="json"),
            attempts=step.attempts,
            usage=step_usage(outputs),
            recorded_in=running_sample(),
        )

    def _apply(
        self,
        entry: WorldEntry,
        tool: str,
        arguments: dict[str, Any],
        raw_arguments: str | None,
        action: str,
    ) -> Observation:
        """Add a recorded answer to the history (the call as this sample made it)."""
        try:
            check = None if entry.check is None else SimCheck.model_validate(entry.check)
        except ValueError:
            raise WorldMiss(
                f"world entry {entry.key[:16]}...: its check record is not one"
            ) from None
        state = self.state
        if self.explicit and entry.state is not None:
            state = entry.state
        step = SimStep(
            tool=tool,
            arguments=arguments,
            raw_arguments=raw_arguments,
            observation=_in_text_order(entry),
            text=entry.text,
            parse_failed=entry.parse_failed,
            attempts=0,
            patch=entry.patch,
            state=state if self.explicit else None,
            check=check,
            source=ObservationSource.WORLD,
            key=entry.key,
        )
        return self._commit(step, action, raw_arguments)

    async def _ask(
        self, tool: str, arguments: dict[str, Any], raw_arguments: str | None, action: str
    ) -> tuple[SimStep, list[ModelOutput]]:
        """Ask the model for one action's observation: its step (not in the history), outputs."""

        def read(text: str) -> Reading:
            value, shown = self.layout.read(text)
            if self.state is None:
                return Reading(value, shown)
            return Reading(value, shown, *apply_reply_patch(text, self.state))

        layout = self.layout
        asked = await ask(
            self.model,
            [*self._messages, layout.current(action, self.state)],
            read,
            attempts=self.max_retries + 1,
            reask=lambda error: layout.reask(error),
            errors=(*layout.parse_errors, PatchError),
            cache=self.cache,
            config=self.config,
        )
        outputs = list(asked.outputs)
        if asked.value is None:
            if not self.pass_raw:
                raise SimulatorError(
                    f"simulator gave no usable observation for {tool!r} after "
                    f"{asked.attempts} attempts: {asked.problem}"
                )
            failed = SimStep(
                tool=tool,
                arguments=arguments,
                raw_arguments=raw_arguments,
                observation=None,
                text=asked.last_text or "{}",
                parse_failed=True,
                attempts=asked.attempts,
                state=self.state,
                source=ObservationSource.SIMULATOR,
            )
            return failed, outputs
        checked = _Checked(asked.value, None, 0, [])
        if self.checker is not None:
            checked = await self._checked(tool, arguments, action, asked, read)
            outputs += checked.outputs
        value, shown, patch, new_state = checked.reading
        step = SimStep(
            tool=tool,
            arguments=arguments,
            raw_arguments=raw_arguments,
            observation=value,
            text=shown,
            attempts=asked.attempts + checked.reasks,
            patch=patch,
            state=new_state,
            check=checked.check,
            source=ObservationSource.SIMULATOR,
        )
        return step, outputs

    def _commit(self, step: SimStep, action: str, raw_arguments: str | None) -> Observation:
        """Add a step to the history (state, online checks' memory, path); its observation."""
        if step.parse_failed:
            self._append(step, action, raw_arguments)
            return Observation(value=None, text=step.text or "{}", parse_failed=True)
        if step.state is not None:
            self.state = step.state
        if self.checker is not None:
            self.checker.record(step.tool, step.arguments, _checkable(step.observation))
        self._append(step, action, raw_arguments)
        return Observation(value=step.observation, text=step.text or "")

    async def _checked(
        self,
        tool: str,
        arguments: dict[str, Any],
        action: str,
        asked: Asked[Reading],
        read: Callable[[str], Reading],
    ) -> _Checked:
        """Check the answer; on a failure re-ask once with the problem named."""
        assert self.checker is not None and asked.value is not None
        first = asked.value
        self.checked += 1
        failures = self.checker.check(tool, arguments, _checkable(first.value))
        if not failures:
            return _Checked(first, None, 0, [])
        model = self.check_model or self.model
        layout = self.layout
        again = await ask(
            model,
            [
                *self._messages,
                layout.current(action, self.state),
                ChatMessageAssistant(content=asked.last_text or ""),
                layout.current(reask_action(action, _problem(failures)), self.state),
            ],
            read,
            attempts=self.max_retries + 1,
            reask=lambda error: layout.reask(error),
            errors=(*layout.parse_errors, PatchError),
            cache=self.cache,
            config=self.config,
        )
        retried = (
            None
            if again.value is None
            else self.checker.check(tool, arguments, _checkable(again.value.value))
        )
        reask_kept = again.value is not None and retried is not None
        reask_kept = reask_kept and len(retried or []) <= len(failures)
        kept, rejected = (again.value, first) if reask_kept else (first, again.value)
        assert kept is not None
        check = SimCheck(
            failures=failures,
            reask_model=str(model),
            reask_failures=retried,
            kept=KeptAnswer.REASK if reask_kept else KeptAnswer.FIRST,
            rejected=None if rejected is None else _checkable(rejected.value),
            suspect=bool(retried) if reask_kept else True,
        )
        return _Checked(kept, check, again.attempts, list(again.outputs))

    def record_failure(
        self,
        tool: str,
        arguments: dict[str, Any],
        error: dict[str, Any],
        raw_arguments: str | None = None,
    ) -> None:
        """Note in the history that an action failed before reaching the environment."""
        self._append(
            SimStep(
                tool=tool,
                arguments=arguments,
                raw_arguments=raw_arguments,
                observation=error,
                text=json.dumps(failed_observation(error), ensure_ascii=False),
                failed=True,
                attempts=0,
                state=self.state,
            ),
            self.layout.action_text(tool, arguments, raw_arguments),
            raw_arguments,
        )

    def _append(self, step: SimStep, action: str, raw_arguments: str | None) -> None:
        """Add a step; the history keeps the plain action (no state), so it stays a prefix."""
        self.steps.append(step)
        self._messages += self.layout.history(action, step.text or "{}")
        failed = step.observation if step.failed and isinstance(step.observation, dict) else None
        self._path.append(_path_step(step.arguments, step.tool, raw_arguments, failed))


def running_sample() -> Provenance | None:
    """The run sample this code runs in, as a world entry's provenance (None: no sample)."""
    active = sample_active()
    if active is None:
        return None
    return Provenance(
        eval_id=active.eval_id,
        sample_uuid=active.sample_uuid,
        sample_id=str(active.sample.id),
        epoch=active.epoch,
    )


def _in_text_order(entry: WorldEntry) -> Any:
    """An entry's observation with its members in the order its text has them.

    A world stores values as canonical JSON (sorted keys); the text the agent is shown
    keeps the simulator's order, and what reads the value by position (a fault that picks
    a field) must see the order a live answer had.
    """
    if not isinstance(entry.observation, dict | list):
        return entry.observation
    try:
        ordered = json.loads(entry.text)
    except (ValueError, RecursionError):
        return entry.observation
    return ordered if ordered == entry.observation else entry.observation


def _path_step(
    arguments: dict[str, Any],
    tool: str,
    raw_arguments: str | None,
    failed: dict[str, Any] | None = None,
) -> PathStep:
    """A call as a world keys it: the agent's raw string when passed on, else the arguments."""
    return PathStep.of(tool, raw_arguments if raw_arguments is not None else arguments, failed)


def step_usage(outputs: list[ModelOutput]) -> dict[str, int] | None:
    """The tokens of the model calls that made an answer, by kind (None: none reported)."""
    found = [output.usage for output in outputs if output.usage is not None]
    if not found:
        return None
    return {
        "input_tokens": sum(u.input_tokens for u in found),
        "output_tokens": sum(u.output_tokens for u in found),
    }

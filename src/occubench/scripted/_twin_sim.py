"""The twin as a simulator (``occubench/twin``) and its forgetful variant (``occubench/forgetful``).

Neither calls a model: each answers the simulator conversation from the environment's
executable twin (``occubench.twins``), reading only what a simulator model is sent.

- **Which twin**: the tool names of the action definitions in the system prompt (the
  release's ``{action_set_definitions}:`` section or the ``### Actions`` block) pick the
  twin whose tools are exactly those (else the one twin that has them all); none, or more
  than one, is a ``SimulatorError`` naming the env's tools. The package's twins are
  looked in, and a folder of twins only when the model is built with ``twins=DIR``
  (``--twins DIR``).
- **Its state**: in history mode, the initial state embedded in the prompt (the release's
  ``{{initial_state}}:`` section or the ``### Initial state`` block) with the earlier
  actions of the conversation replayed on it in order, skipping those the history marks
  ``"harness_note": "failed"`` (an injected error that never reached the environment); in
  explicit state mode, the ``current_state`` the action carries, and the reply also holds
  the twin's state change as the ``<state_patch>`` the protocol asks for.
- **Its reply**: the twin's observation in the tags of the conversation's layout (either
  protocol's). Asked for a semantic fault (``SEMANTIC_FAULT_PROMPT``), it returns the
  canned simulator's deterministic variant of the observation it is given. A
  conversation without a system prompt asks no environment (a run's preflight): ``{}``.

``forgetful`` answers like ``twin`` until its ``FORGET_WRITE``-th write (a successful
call that changed the state): that answer still looks right, but the write's change is
dropped from every later answer (in explicit state mode its patch is empty): the silent
state drift EnvSimBench measures.

A twin follows no fault rule of a prompt: ``check_twin_run`` refuses a run whose
simulator is told to place faults (the prompt engine with E1-E3), a run whose tasks'
environments have no twin, and ``--twins`` for any other simulator.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageSystem, ChatMessageUser
from inspect_ai.tool import ToolInfo

from occubench.dataset import EnvConfig, ToolSpec
from occubench.errors import UsageError
from occubench.faults import SEMANTIC_FAULT_PROMPT
from occubench.scripted._canned import semantic_variant
from occubench.scripted._reply import Behaviour, Reply
from occubench.scripted._simulated import (
    Action,
    last_action,
    observation_reply,
    read_action,
    system_text,
)
from occubench.simulator import SimulatorError, normalize_braces
from occubench.twins import ChangeKind, Outcome, StateChange, Twin, TwinStep, twins

FORGET_WRITE = 2
"""``forgetful`` forgets the state change of this write (1 for the first) of an episode."""

TWIN_SIMULATORS = ("twin", "forgetful")
"""The scripted simulators that answer from twins (``occubench/<name>``)."""

_ACTIONS = ("{action_set_definitions}:", "### Actions\n```json\n")
_STATES = ("### Initial state\n```json\n", "{initial_state}:")
_OBSERVED = re.compile(r"<(predicted_observation|observation)>(.*?)</\1>", re.DOTALL)


def _decoded(text: str, labels: Iterable[str]) -> Any:
    """The JSON value after the first of ``labels`` that has one (None: none has)."""
    decoder = json.JSONDecoder()
    for label in labels:
        start = text.find(label)
        if start < 0:
            continue
        try:
            return decoder.raw_decode(text[start + len(label) :].lstrip())[0]
        except json.JSONDecodeError:
            continue
    return None


def prompt_tools(system: str) -> list[dict[str, Any]]:
    """The action definitions in a simulator's system prompt (empty: none found).

    Release prompts end with an ``{action_set_definitions}:`` section (a JSON object of
    tools by name); other prompts get a ``### Actions`` block (a JSON list of tools).
    """
    found = _decoded(system, _ACTIONS)
    if isinstance(found, dict):
        return [{**t, "name": n} for n, t in found.items() if isinstance(t, dict)]
    if isinstance(found, list):
        return [t for t in found if isinstance(t, dict) and t.get("name")]
    return []


def prompt_state(system: str) -> dict[str, Any] | None:
    """The initial state a simulator's system prompt embeds (None: none found)."""
    found = _decoded(normalize_braces(system), _STATES)
    return found if isinstance(found, dict) else None


def changes_patch(changes: Iterable[StateChange]) -> list[dict[str, Any]]:
    """A twin's state changes as an RFC 6902 patch that makes them, in an order that applies.

    Additions and replacements go first, in order; removals last, the last listed first
    (a list's tail is removed from its end).
    """
    ops: list[dict[str, Any]] = []
    removals: list[dict[str, Any]] = []
    for change in changes:
        if change.kind is ChangeKind.REMOVED:
            removals.append({"op": "remove", "path": change.path})
        else:
            op = "add" if change.kind is ChangeKind.ADDED else "replace"
            ops.append({"op": op, "path": change.path, "value": change.after})
    return ops + removals[::-1]


def _observed(message: ChatMessage) -> Any:
    found = _OBSERVED.search(message.text)
    try:
        return json.loads(found.group(2) if found else message.text)
    except json.JSONDecodeError:
        return None


def _failed(message: ChatMessage) -> bool:
    """Whether a history observation is an injected error that never reached the env."""
    observed = _observed(message)
    return isinstance(observed, dict) and observed.get("harness_note") == "failed"


def earlier_actions(messages: list[ChatMessage]) -> list[Action]:
    """The conversation's earlier actions that reached the environment, in order.

    An action answered with a ``"harness_note": "failed"`` observation is left out; so is
    the first answer to an action re-asked after a failed online check (``harness_check``).
    """
    turns = [m for m in messages if not isinstance(m, ChatMessageSystem)]
    done: list[Action] = []
    for asked, answered in zip(turns[:-1], turns[1:-1], strict=False):
        if not isinstance(asked, ChatMessageUser) or not isinstance(answered, ChatMessageAssistant):
            continue
        if not _failed(answered):
            done.append(read_action(asked))
    if turns and "harness_check" in read_action(turns[-1]).raw and done:
        done.pop()  # the re-asked action's first answer: the same call, asked again
    return done


class TwinSimulator:
    """A simulator answering from twins (module doc); ``forget_write`` makes it forgetful.

    Args:
        twins: A folder of twins named by the user (None: the package's twins only).
        forget_write: Forget the state change of this write of each episode (1 for the
            first; None: forget nothing).
    """

    def __init__(self, twins: str | Path | None = None, forget_write: int | None = None) -> None:
        self.folder = None if twins is None else Path(twins).expanduser()
        self.known = twins_in(self.folder)
        self.forget_write = forget_write
        self._envs: dict[str, EnvConfig] = {}

    def __call__(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        """The twin's answer to the conversation's last action (module doc)."""
        system = system_text(messages)
        if system == SEMANTIC_FAULT_PROMPT:
            given = json.loads(messages[-1].text).get("observation", {})
            return Reply(
                content=f"<observation>{json.dumps(semantic_variant(given))}</observation>"
            )
        if not system:  # no environment asked: a probe (the run's preflight)
            return Reply(content=observation_reply(messages, {}))
        twin = self.twin(system)
        current = last_action(messages)
        writes = self._replay(twin, earlier_actions(messages))
        if current.state is not None:
            twin.reset(current.state)
        step = twin.call(str(current.name), current.arguments)
        forgotten = self._is_write(step) and writes + 1 == self.forget_write
        patch = None
        if current.state is not None:
            patch = [] if forgotten else changes_patch(step.changes)
        return Reply(content=observation_reply(messages, step.observation, patch))

    def _is_write(self, step: TwinStep) -> bool:
        return step.outcome is Outcome.SUCCESS and bool(step.changes)

    def _replay(self, twin: Twin, actions: list[Action]) -> int:
        """Replay earlier actions on a fresh twin; the writes among them (forgetting one)."""
        writes = 0
        for action in actions:
            before = copy.deepcopy(twin.state)
            step = twin.call(str(action.name), action.arguments)
            if self._is_write(step):
                writes += 1
                if writes == self.forget_write:
                    twin.state = before
        return writes

    def twin(self, system: str) -> Twin:
        """A fresh twin of the environment a simulator prompt describes, at its initial state.

        Raises:
            SimulatorError: no twin, or more than one, has the prompt's tools; or the
                prompt embeds no initial state.
        """
        env = self._envs.get(system)
        if env is None:
            env = self._envs[system] = self._env(system)
        return self.known[env.environment_name](env)

    def _env(self, system: str) -> EnvConfig:
        tools = prompt_tools(system)
        names = sorted(str(t["name"]) for t in tools)
        where = "the package's twins" + (f" and {self.folder}" if self.folder else "")
        exact = [t for t in self.known.values() if sorted(t.tool_names()) == names]
        found = exact or [t for t in self.known.values() if set(names) <= set(t.tool_names())]
        if not names or len(found) != 1:
            why = "no twin" if not found else f"{len(found)} twins"
            raise SimulatorError(
                f"{why} in {where} answer(s) the environment with tools "
                f"{', '.join(names) or '(none found in the prompt)'}"
            )
        state = prompt_state(system)
        if state is None:
            raise SimulatorError(
                f"the simulator prompt of the environment with tools {', '.join(names)} embeds "
                "no initial state for its twin to start from"
            )
        return EnvConfig(
            environment_name=found[0].environment,
            world_model_system_prompt=system,
            action_set_definitions=[ToolSpec.model_validate(t) for t in tools],
            task_initial_state=state,
            state_description={},
        )


def twins_in(folder: Path | None) -> dict[str, type[Twin]]:
    """The twins a twin simulator answers from: the package's, and ``folder``'s if named."""
    return twins(folder)


def twin_simulator(**model_args: Any) -> Behaviour:
    """``occubench/twin``: answers from twins (``-M twins=DIR``: a folder of them too)."""
    return TwinSimulator(model_args.get("twins"))


def forgetful_simulator(**model_args: Any) -> Behaviour:
    """``occubench/forgetful``: the twin, forgetting its ``FORGET_WRITE``-th write."""
    return TwinSimulator(model_args.get("twins"), forget_write=FORGET_WRITE)


TWIN_MODELS = {"twin": twin_simulator, "forgetful": forgetful_simulator}
"""The twin simulators by name, each made per model instance with its model args."""


def is_twin_simulator(model: str) -> bool:
    """Whether an Inspect model name is one of the twin simulators (``occubench/twin``)."""
    provider, _, name = model.partition("/")
    return provider == "occubench" and name in TWIN_MODELS


def check_twin_run(
    simulator: str,
    folder: Path | None,
    envs: Iterable[EnvConfig],
    *,
    simulator_places_faults: bool,
) -> None:
    """Refuse, before it starts, a run the twin simulator cannot answer.

    Raises:
        UsageError: ``--twins`` given for a simulator that reads no twins; the simulator
            told to place faults (the prompt engine with E1-E3), which a twin cannot
            follow; an environment of the selected tasks with no twin, or whose twin lacks
            some of its tools.
    """
    if not is_twin_simulator(simulator):
        if folder is not None:
            raise UsageError(
                f"--twins is read by the twin simulators ({', '.join(TWIN_SIMULATORS)} of "
                f"occubench/) only; the simulator here is {simulator}"
            )
        return
    if simulator_places_faults:
        raise UsageError(
            f"{simulator} follows no fault rule of a prompt: under the prompt fault engine "
            "(the paper protocol's) E1-E3 need a simulator that places them; give "
            "--fault-engine code (or --protocol occubench) to place them on the twin's answers"
        )
    known = twins_in(folder)
    where = "the package" + (f" or {folder}" if folder else "")
    unique = {env.environment_name: env for env in envs}
    missing = sorted(name for name in unique if name not in known)
    if missing:
        raise UsageError(
            f"{simulator}: no twin in {where} for the environment(s) {', '.join(missing)} of "
            "the selected tasks (select other tasks, or name a folder of twins with --twins)"
        )
    for name, env in sorted(unique.items()):
        try:
            known[name](env)
        except (TypeError, ValueError) as error:
            raise UsageError(f"{simulator}: the twin of {name}: {error}") from None

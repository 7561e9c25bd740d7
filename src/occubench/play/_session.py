"""A play session: one task, a person as the agent, run and graded as any run is.

A person may take the simulator's seat instead (``run_simulate``), or the user's on a task
with a user brief (``run_user``: the agent and the simulator are models).

``run_play`` runs the benchmark task (``occubench/occubench``) through the one runner
(``run_shard``) on the chosen task, with ``human/<name>`` as the agent model seated at the
person's desk; the simulator, the fault plan of (seed, task, mode, counts, families),
the grading and the log are the run's. Each session logs to a folder of its own under
the log root (a session is never resumed: no sample retry either, a person's moves
cannot be replayed), and the verdict is read back from that log.
"""

from __future__ import annotations

import datetime as dt
import random

from inspect_ai.model import Model
from pydantic import BaseModel, ConfigDict, Field

from occubench.config import EvalOptions, RunConfig, protocol_points
from occubench.dataset import UserBrief
from occubench.defaults import DEFAULT_PLAY_LOG_ROOT
from occubench.errors import UsageError
from occubench.play._human import HUMAN_PROVIDER, PLAYER_NAME, Desk, human_model
from occubench.play._simulate import SimDesk
from occubench.play._talk import TalkDesk
from occubench.play._turns import PlayInfo, PlayResult
from occubench.results import read_trajectories
from occubench.roles import Role
from occubench.scale import RunSpec, absolute_location, run_shard, selected_task_ids, whole_run


def pick_task(config: RunConfig, task_id: int | None, pick_seed: int | None = None) -> int:
    """The task to play: ``task_id``, or one drawn from what the configuration selects.

    Args:
        config: The selection (dataset, categories, domains, difficulty, task ids).
        task_id: The task asked for, if one was.
        pick_seed: Seed of the draw (None: a fresh draw each time).

    Raises:
        UsageError: the task is not in the selection, or the selection is empty.
        DatasetError: the dataset cannot be loaded.
    """
    ids = selected_task_ids(config)
    if task_id is not None:
        if task_id not in ids:
            raise UsageError(f"task {task_id} is not in {config.dataset} (or not selected)")
        return task_id
    if not ids:
        raise UsageError(f"no task in {config.dataset} matches the selection")
    return random.Random(pick_seed).choice(ids)


class PlaySetup(BaseModel):
    """Who plays which task, against which simulator and judge, logging where."""

    model_config = ConfigDict(extra="forbid")

    player: str = Field(pattern=f"^{PLAYER_NAME.pattern}$", description="The person's name.")
    simulator: str = Field(description="The simulator model.")
    verifier: str | None = Field(
        default=None, description="The judge (default: the simulator; checks grade tasks with)."
    )
    config: RunConfig = Field(description="The run's settings, with the one task selected.")
    log_root: str = Field(
        default=DEFAULT_PLAY_LOG_ROOT, description="Each session logs to a new folder here."
    )
    agent_model: str | None = Field(
        default=None,
        description="The agent, when the person is the simulator (None: the person is the agent).",
    )

    @property
    def person(self) -> str:
        """The person's model name: ``human/<player>``."""
        return f"{HUMAN_PROVIDER}/{self.player}"

    @property
    def agent(self) -> str:
        """The agent's model name in the log and the reports."""
        return self.agent_model or self.person

    def task_id(self) -> int:
        """The one task selected.

        Raises:
            UsageError: the configuration does not select exactly one task.
        """
        ids = self.config.task_ids or []
        if len(ids) != 1:
            raise UsageError("a play session is one task: select exactly one task id")
        return ids[0]

    def info(self) -> PlayInfo:
        """The session's header, from the task's record.

        Raises:
            UsageError: not one task is selected.
            DatasetError: the dataset cannot be loaded or lacks the task.
        """
        self.task_id()
        loaded = self.config.load_tasks()
        (task,) = loaded.tasks
        config, points = self.config, protocol_points(self.config)
        return PlayInfo(
            player=self.player,
            task_id=task.task_id,
            scenario=task.task_scenario_name,
            industry=loaded.industry(task),
            domain=loaded.domain(task),
            difficulty=task.difficulty_level,
            env_mode=config.env_mode.value,
            fault_count=config.fault_count,
            fault_duration=config.fault_duration,
            families=[f.value for f in config.faults],
            seed=config.seed,
            protocol=config.protocol.value,
            checks_arguments=points.validate_tool_args,
            max_tool_calls=points.max_tool_calls,
            simulator=self.simulator,
            agent=self.agent_model,
        )

    def brief(self) -> UserBrief:
        """The user brief of the task, for a person in the user's seat.

        Raises:
            UsageError: the task has no user brief, or not one task is selected.
            DatasetError: the dataset cannot be loaded or lacks the task.
        """
        self.task_id()
        (task,) = self.config.load_tasks().tasks
        if task.user is None:
            raise UsageError(
                f"task {task.task_id} has no user brief (a 'user' section): --as user plays "
                "the user of a task with one (e.g. --dataset conversational)"
            )
        return task.user

    def log_dir(self) -> str:
        """A new folder for one session under the log root."""
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        root = absolute_location(self.log_root).rstrip("/")
        mode = self.config.env_mode.value
        return f"{root}/{self.player}-task-{self.task_id()}-{mode}-{stamp}"


def run_play(setup: PlaySetup, desk: Desk, display: str = "none") -> PlayResult:
    """Run one session with the person at ``desk`` as the agent; the verdict from its log.

    Raises:
        UsageError: not one task is selected, or the player's name is refused.
        LogFolderError: the log folder cannot take the session.
    """
    if setup.agent_model is not None:
        raise UsageError("this session's agent is a model: the person writes the observations")
    return _session(setup, {Role.AGENT: human_model(setup.player, desk)}, display)


def run_simulate(
    setup: PlaySetup, writer: SimDesk, draft: Model | None = None, display: str = "none"
) -> PlayResult:
    """Run one session with the person at ``writer`` as the simulator; the verdict from its log.

    The agent (``setup.agent_model``: a model, a scripted agent or an agent program) runs
    the task; each of its tool calls that reaches the simulator is answered by the person,
    offered ``draft``'s answer to accept or edit when one is given.

    Raises:
        UsageError: no agent model or verifier, not one task selected, or the player's
            name is refused.
        LogFolderError: the log folder cannot take the session.
    """
    if setup.agent_model is None:
        raise UsageError("the person writes the observations: name the agent (--agent-model)")
    if setup.verifier is None:
        raise UsageError("the person writes the observations, not the verdict: --verifier-model")
    person = human_model(setup.player, writer=writer, draft=draft)
    return _session(setup, {Role.SIMULATOR: person}, display)


def run_user(
    setup: PlaySetup, talker: TalkDesk, brief: UserBrief, display: str = "none"
) -> PlayResult:
    """Run one session with the person at ``talker`` as the user; the verdict from its log.

    The agent (``setup.agent_model``) and the simulator are models; the task's user brief
    (``brief``, from ``setup.brief()``) is shown to the person, whose replies are the user
    model's (``human/<name>`` in the log's ``user`` role), checked like any user's.

    Raises:
        UsageError: no agent model, not one task selected, or the player's name is refused.
        LogFolderError: the log folder cannot take the session.
    """
    if setup.agent_model is None:
        raise UsageError("the person is the user: name the agent (--agent-model)")
    person = human_model(setup.player, talker=talker, brief=brief)
    return _session(setup, {Role.USER: person}, display)


def _session(setup: PlaySetup, people: dict[Role, Model], display: str) -> PlayResult:
    """Run the session's one task with ``people`` in their roles; the verdict from its log."""
    setup.task_id()
    roles = {Role.SIMULATOR: setup.simulator}
    if setup.verifier:
        roles[Role.VERIFIER] = setup.verifier
    if Role.USER in people:
        roles[Role.USER] = setup.person
    spec = RunSpec(
        name=f"play {setup.player}",
        agent=setup.agent,
        roles=roles,
        config=setup.config,
        options=EvalOptions(retry_on_error=0),
        log_dir=setup.log_dir(),
    )
    result = run_shard(whole_run(spec), models=people, display=display)
    if not result.rows:
        return PlayResult(
            log=result.logs[0] if result.logs else spec.log_dir,
            passed=None,
            error=result.error or "the session left no sample in its log",
        )
    row = result.rows[0]
    (trajectory,) = read_trajectories([row])
    return PlayResult(
        log=row.log,
        passed=row.passed,
        error=row.error,
        answer=trajectory.answer,
        explanation=trajectory.explanation,
        votes=trajectory.votes,
        checks=trajectory.checks,
        faults=row.faults,
        tool_calls=row.tool_calls,
        stop_reason=row.stop_reason,
    )

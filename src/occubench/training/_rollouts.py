"""Rollouts at training scale: many episodes of one agent model at once, through the gym API.

``run_rollouts(source, agent, ...)`` plays ``per_task`` episodes of each task of an
``EpisodeSource`` (``occubench.env`` episodes: the run's simulator, faults, checks,
verifier and exploit guard), at most ``concurrency`` at once (a semaphore). Each episode is
the agent model's loop: it is given the conversation and the env's tools, each tool call it
makes is a ``step``, and its first turn without a tool call is its answer, graded. The
``i``-th rollout of a task (from 0) draws its fault plan from ``seed + i``.

With a world in the source's settings (``world``, ``world_mode``) the simulator answers
through it: ``record`` while training (a path any rollout took is answered from the world
for every later one, and concurrent rollouts on one path wait for a single simulator call),
``replay`` for evaluation (the simulator is never asked). Each ``ModelRollout`` says where its
observations came from and what its model calls used (tokens per model, priced when a
``PriceTable`` is given); the ``RolloutReport`` sums them.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from inspect_ai.hooks import Hooks, ModelUsageData, hooks
from inspect_ai.model import GenerateConfig, Model, ModelUsage
from pydantic import BaseModel, ConfigDict, Field, computed_field

from occubench.agent import StopReason
from occubench.calls import named_model, resilient
from occubench.config import ResolvedRun
from occubench.costs import PriceTable, usage_cost
from occubench.dataset import tool_info
from occubench.defaults import DEFAULT_ROLLOUT_CONCURRENCY, DEFAULT_ROLLOUT_MAX_TURNS
from occubench.env import EnvEpisode, ToolCallAction, make_episode
from occubench.errors import InfrastructureError, UsageError
from occubench.grading import Grade
from occubench.training._source import EpisodeSource
from occubench.training._text_rollouts import RewardRule, reward_of
from occubench.worlds import ObservationSource, close_shared_worlds

_tally: ContextVar[dict[str, ModelUsage] | None] = ContextVar("occubench_rollout", default=None)
"""The usage of the rollout whose task makes the call, by model (None: not in a rollout)."""


@hooks(name="occubench_rollouts", description="Counts each rollout's model usage.")
class RolloutUsage(Hooks):
    """Adds every model call's usage to the rollout whose task made it."""

    def enabled(self) -> bool:
        """Only inside a rollout."""
        return _tally.get() is not None

    async def on_model_usage(self, data: ModelUsageData) -> None:
        """A call completed: count it for its rollout."""
        tally = _tally.get()
        if tally is not None:
            tally[data.model_name] = tally.get(data.model_name, ModelUsage()) + data.usage


class ModelRollout(BaseModel):
    """One episode played by the agent model: its reward and what it cost."""

    task_id: int = Field(description="The task.")
    index: int = Field(description="Which of the task's rollouts (0-based; seeds its fault plan).")
    reward: float = Field(description="The reward in [0, 1] (0 for an error).")
    passed: bool | None = Field(description="The verdict; None when the episode errored.")
    exploit_suspected: bool | None = Field(
        default=None, description="The exploit guard suspected the pass (None: off, or an error)."
    )
    simulator_off_contract: bool | None = Field(
        default=None,
        description="The exploit guard found the simulator off its contract, unasked (None: "
        "off, or an error).",
    )
    error: str | None = Field(default=None, description="The infrastructure error, if any.")
    turns: int = Field(default=0, description="Agent model turns.")
    tool_calls: int = Field(default=0, description="Tool calls that reached the tool layer.")
    simulator_calls: int = Field(
        default=0, description="Observations the simulator was asked for (recorded in record mode)."
    )
    world_hits: int = Field(default=0, description="Observations answered from the world.")
    live_calls: int = Field(
        default=0, description="Observations answered live for paths a replayed world lacks."
    )
    tokens: dict[str, int] = Field(
        default_factory=dict, description="Tokens of the rollout's model calls, by model."
    )
    cost: float | None = Field(
        default=None, description="Dollars of those calls (None: no prices, or a model unpriced)."
    )
    grade: Grade | None = Field(default=None, description="The grade (None: an error).")


class RolloutReport(BaseModel):
    """A batch of rollouts and their sums."""

    rollouts: list[ModelRollout] = Field(description="Each rollout, by task then index.")
    concurrency: int = Field(description="Episodes played at once at most.")
    seconds: float = Field(description="Wall-clock seconds the batch took.")

    @computed_field  # type: ignore[prop-decorator]
    @property
    def episodes(self) -> int:
        """Rollouts played."""
        return len(self.rollouts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def errors(self) -> int:
        """Rollouts that ended in an infrastructure error."""
        return sum(r.error is not None for r in self.rollouts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def mean_reward(self) -> float:
        """The mean reward (errors count 0)."""
        return sum(r.reward for r in self.rollouts) / len(self.rollouts) if self.rollouts else 0.0

    @computed_field  # type: ignore[prop-decorator]
    @property
    def simulator_calls(self) -> int:
        """Observations the simulator was asked for, over the batch."""
        return sum(r.simulator_calls + r.live_calls for r in self.rollouts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def world_hits(self) -> int:
        """Observations the world answered (simulator calls saved), over the batch."""
        return sum(r.world_hits for r in self.rollouts)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def cost(self) -> float | None:
        """Dollars of the batch (None: a rollout not priced)."""
        costs = [r.cost for r in self.rollouts]
        return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)

    def tokens(self) -> dict[str, int]:
        """Tokens of the batch, by model."""
        total: dict[str, int] = {}
        for rollout in self.rollouts:
            for model, count in rollout.tokens.items():
                total[model] = total.get(model, 0) + count
        return total


async def play_episode(episode: EnvEpisode, agent: Model, max_turns: int) -> tuple[Grade, int]:
    """One episode by the agent model: its grade and its turns (the episode is opened here).

    Each turn the model is given the conversation and the env's tools; its tool calls are
    stepped in order, and its first turn without one is the answer. An episode that
    reaches ``max_turns`` or the protocol's tool-call cap is graded as it stands.
    """
    await episode.reset()
    tools = [tool_info(spec) for spec in episode.env.action_set_definitions]
    for turn in range(1, max_turns + 1):
        output = await agent.generate(episode.messages, tools=tools)
        message = output.message
        if not message.tool_calls:
            return await episode.grade(message.text), turn
        for call in message.tool_calls:
            await episode.step(ToolCallAction(tool=call.function, arguments=call.arguments))
            if episode.at_call_limit():
                return await episode.grade_as_is(), turn
    episode.close(stop_reason=StopReason.TURN_LIMIT)
    return await episode.grade_as_is(), max_turns


def _counts(episode: EnvEpisode) -> dict[str, int]:
    """Where the episode's observations came from (as ``SampleRow`` counts them)."""
    counts = dict.fromkeys(ObservationSource, 0)
    for step in episode.record.steps:
        if not step.failed:
            counts[step.source or ObservationSource.SIMULATOR] += 1
    return {
        "world_hits": counts[ObservationSource.WORLD],
        "simulator_calls": counts[ObservationSource.SIMULATOR],
        "live_calls": counts[ObservationSource.LIVE],
        "tool_calls": episode.record.tool_calls,
    }


def _priced(usage: dict[str, ModelUsage], prices: PriceTable | None) -> float | None:
    if prices is None:
        return None
    costs = [usage_cost(prices, model, used) for model, used in usage.items()]
    return None if any(c is None for c in costs) else sum(c for c in costs if c is not None)


class RolloutModels(BaseModel):
    """The models of a batch, built once: the agent, the simulator, the judge (if named)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    agent: Model
    simulator: Model
    verifier: Model | None

    @classmethod
    def of(cls, source: EpisodeSource, agent: str | Model, connections: int) -> RolloutModels:
        """Each model by name (or as given), allowed ``connections`` requests at once."""
        config = GenerateConfig(max_connections=connections)

        def built(model: str | Model) -> Model:
            if isinstance(model, Model):
                return resilient(model)
            return named_model(model, config, memoize=False)

        return cls(
            agent=built(agent),
            simulator=built(source.simulator),
            verifier=None if source.verifier is None else built(source.verifier),
        )


async def roll_out_model(
    source: EpisodeSource,
    models: RolloutModels,
    task_id: int,
    index: int,
    *,
    max_turns: int,
    rule: RewardRule = RewardRule.PASSED,
    prices: PriceTable | None = None,
) -> ModelRollout:
    """One rollout of one task (fault plan seed: the settings' seed plus ``index``).

    An infrastructure error (the simulator, the judge, a provider) is the rollout's
    ``error``, reward 0; a bad setting or dataset raises.
    """
    usage: dict[str, ModelUsage] = {}
    _tally.set(usage)  # this task's own context: its calls, and those of the tasks it starts
    assert source.config.dataset is not None  # an EpisodeSource names its dataset
    episode = make_episode(
        source.config.dataset,
        task_id,
        simulator=models.simulator,
        verifier=models.verifier,
        config=source.config,
        seed=source.config.seed + index,
    )
    fields: dict[str, Any] = {"task_id": task_id, "index": index}
    try:
        grade, turns = await play_episode(episode, models.agent, max_turns)
    except InfrastructureError as e:
        fields |= {"reward": 0.0, "passed": None, "error": f"{type(e).__name__}: {e}"}
    else:
        fields |= {
            "reward": reward_of(grade, rule),
            "passed": grade.passed,
            "exploit_suspected": grade.exploit_suspected,
            "simulator_off_contract": grade.simulator_off_contract,
            "turns": turns,
            "grade": grade,
        }
    fields |= _counts(episode)
    fields["tokens"] = {model: used.total_tokens for model, used in usage.items()}
    return ModelRollout.model_validate({**fields, "cost": _priced(usage, prices)})


async def run_rollouts(
    source: EpisodeSource,
    agent: str | Model,
    *,
    task_ids: Sequence[int] | None = None,
    per_task: int = 1,
    concurrency: int = DEFAULT_ROLLOUT_CONCURRENCY,
    max_turns: int | None = None,
    rule: RewardRule = RewardRule.PASSED,
    prices: PriceTable | None = None,
) -> RolloutReport:
    """Play ``per_task`` rollouts of each task, at most ``concurrency`` at once.

    Args:
        source: The settings and models of the episodes (its world, if any, is used).
        agent: The agent model (an Inspect model name, or a Model). The models named
            are built once, each allowed ``concurrency`` requests at once (times k votes).
        task_ids: The tasks (default: those the settings select).
        per_task: Rollouts of each task.
        concurrency: Episodes at once (a semaphore).
        max_turns: Agent turns of one rollout (default: the protocol's cap, else
            ``DEFAULT_ROLLOUT_MAX_TURNS``).
        rule: How a grade becomes a reward.
        prices: Prices of the models, to cost each rollout (None: not costed).

    Raises:
        UsageError: ``per_task`` or ``concurrency`` below 1.
        DatasetError: the dataset is malformed or a filter names what it lacks.
    """
    if per_task < 1 or concurrency < 1:
        raise UsageError("per_task and concurrency must be at least 1")
    models = RolloutModels.of(source, agent, concurrency * source.config.votes)
    tasks = list(task_ids) if task_ids is not None else source.task_ids()
    cap = ResolvedRun.of(source.config).points.max_turns
    turns = max_turns or cap or DEFAULT_ROLLOUT_MAX_TURNS
    gate = asyncio.Semaphore(concurrency)

    async def one(task_id: int, index: int) -> ModelRollout:
        async with gate:
            return await roll_out_model(
                source, models, task_id, index, max_turns=turns, rule=rule, prices=prices
            )

    started = time.perf_counter()
    try:
        rollouts = await asyncio.gather(*(one(t, i) for t in tasks for i in range(per_task)))
    finally:
        close_shared_worlds()  # what the batch recorded, on disk
    return RolloutReport(
        rollouts=list(rollouts), concurrency=concurrency, seconds=time.perf_counter() - started
    )

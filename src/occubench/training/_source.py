"""Where a trainer's episodes come from: the tasks a run selects, the models, the settings.

Every format of this room (verifiers, OpenEnv) opens its episodes here, through
``occubench.env.make_episode``: the same simulator, faults, checks and verifier as a run.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from occubench.config import RunConfig
from occubench.env import EnvEpisode, make_episode


class EpisodeSource(BaseModel):
    """The run settings and models every episode of a trainer's environment is made with."""

    model_config = ConfigDict(frozen=True)

    config: RunConfig = Field(
        description="The run settings: dataset, task selection, env mode, faults, seed, ..."
    )
    simulator: str = Field(description="The simulator model (an Inspect model name).")
    verifier: str | None = Field(
        default=None,
        description="The judge model; None: the run's combination rule (the tasks' checks, "
        "or the simulator for a task without checks).",
    )

    @classmethod
    def of(
        cls, dataset: str, simulator: str, verifier: str | None = None, **settings: Any
    ) -> EpisodeSource:
        """A source from a dataset, the models and ``RunConfig`` fields as a trainer passes them.

        Raises:
            ValidationError: a setting is unknown or invalid (the message names it).
        """
        config = RunConfig.model_validate({**settings, "dataset": dataset})
        return cls(config=config, simulator=simulator, verifier=verifier)

    def task_ids(self) -> list[int]:
        """The tasks the settings select (``task_ids``, industries, domains, difficulty).

        Raises:
            DatasetError: the dataset is malformed or a filter names what it lacks.
        """
        return [task.task_id for task in self.config.load_tasks().tasks]

    def episode(self, task_id: int, seed: int | None = None) -> EnvEpisode:
        """A new episode of one task, not yet opened (``seed``: the fault plan's, if given)."""
        assert self.config.dataset is not None  # set by ``of``
        return make_episode(
            self.config.dataset,
            task_id,
            simulator=self.simulator,
            verifier=self.verifier,
            config=self.config,
            **({} if seed is None else {"seed": seed}),
        )

"""occubench's tasks in the training ecosystems' environment formats, over ``occubench.env``.

- verifiers: ``load_environment(...)``, verifiers' entry point (``vf-eval occubench.training``;
  the ``verifiers`` extra), its tasks split, seeded, into a training and an evaluation set
  (``split_tasks``);
- OpenEnv: ``openenv_app(...)`` serves one task per episode over OpenEnv's
  reset/step/state contract, behind a credential, on 127.0.0.1 (the ``openenv`` extra);
- Gymnasium: ``occubench.env.gymnasium.OccuBenchEnv`` (the ``gym`` extra);
- rollouts at training scale: ``run_rollouts(...)`` plays many episodes of one agent model
  at once (a semaphore), the simulator through the run's world if it names one, each
  rollout's reward, simulator calls, world hits, tokens and cost in a ``RolloutReport``.
- TRL and other text trainers: a task as one prompt (``completion_prompt``), each
  completion rolled out through an episode and graded (``roll_out_completion``), the grade as a
  reward (``RewardRule``), as a reward function of TRL's shape
  (``rollout_rewards(source.episode)``); it needs no extra.

Each opens its episodes through ``EpisodeSource`` (``occubench.env.make_episode``): the
same simulator, faults, checks and verifier as a run. The names load with their module
on first use, so the package imports without the extras.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from occubench.lazy import lazy_names

if TYPE_CHECKING:
    from occubench.training._openenv_app import (
        OPENENV_USER,
        OpenEnvServer,
        openenv_app,
        openenv_url,
    )
    from occubench.training._openenv_env import (
        OccuBenchAction,
        OccuBenchClient,
        OccuBenchEnvironment,
        OccuBenchObservation,
        OccuBenchState,
    )
    from occubench.training._rollouts import (
        ModelRollout,
        RolloutModels,
        RolloutReport,
        play_episode,
        roll_out_model,
        run_rollouts,
    )
    from occubench.training._source import EpisodeSource
    from occubench.training._split import TaskSplit, split_tasks
    from occubench.training._text_rollouts import (
        CALL_FORMAT,
        COMPLETION_PROMPT,
        CompletionRollout,
        EpisodeFactory,
        ParsedCompletion,
        RewardFunction,
        RewardRule,
        completion_prompt,
        parse_completion,
        reward_of,
        roll_out_completion,
        rollout_rewards,
    )
    from occubench.training._verifiers_env import (
        EPISODE_KEY,
        GRADE_KEY,
        OccuBenchVerifiersEnv,
        load_environment,
    )

_MODULES = {
    "CALL_FORMAT": "_text_rollouts",
    "COMPLETION_PROMPT": "_text_rollouts",
    "CompletionRollout": "_text_rollouts",
    "EpisodeFactory": "_text_rollouts",
    "EPISODE_KEY": "_verifiers_env",
    "EpisodeSource": "_source",
    "GRADE_KEY": "_verifiers_env",
    "ModelRollout": "_rollouts",
    "OPENENV_USER": "_openenv_app",
    "OccuBenchAction": "_openenv_env",
    "OccuBenchClient": "_openenv_env",
    "OccuBenchEnvironment": "_openenv_env",
    "OccuBenchObservation": "_openenv_env",
    "OccuBenchState": "_openenv_env",
    "OccuBenchVerifiersEnv": "_verifiers_env",
    "OpenEnvServer": "_openenv_app",
    "ParsedCompletion": "_text_rollouts",
    "RewardFunction": "_text_rollouts",
    "RewardRule": "_text_rollouts",
    "RolloutModels": "_rollouts",
    "RolloutReport": "_rollouts",
    "TaskSplit": "_split",
    "completion_prompt": "_text_rollouts",
    "load_environment": "_verifiers_env",
    "openenv_app": "_openenv_app",
    "openenv_url": "_openenv_app",
    "parse_completion": "_text_rollouts",
    "reward_of": "_text_rollouts",
    "roll_out_completion": "_text_rollouts",
    "rollout_rewards": "_text_rollouts",
    "split_tasks": "_split",
    "play_episode": "_rollouts",
    "roll_out_model": "_rollouts",
    "run_rollouts": "_rollouts",
}
"""The module of each public name."""

__getattr__ = lazy_names(__name__, _MODULES)

__all__ = [
    "CALL_FORMAT",
    "COMPLETION_PROMPT",
    "EPISODE_KEY",
    "GRADE_KEY",
    "OPENENV_USER",
    "CompletionRollout",
    "EpisodeFactory",
    "EpisodeSource",
    "OccuBenchAction",
    "OccuBenchClient",
    "OccuBenchEnvironment",
    "OccuBenchObservation",
    "OccuBenchState",
    "OccuBenchVerifiersEnv",
    "OpenEnvServer",
    "ParsedCompletion",
    "RewardFunction",
    "RewardRule",
    "completion_prompt",
    "load_environment",
    "openenv_app",
    "openenv_url",
    "parse_completion",
    "reward_of",
    "roll_out_completion",
    "rollout_rewards",
    "ModelRollout",
    "RolloutModels",
    "RolloutReport",
    "TaskSplit",
    "split_tasks",
    "play_episode",
    "roll_out_model",
    "run_rollouts",
]

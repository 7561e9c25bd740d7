"""A Gymnasium-compatible wrapper: text observations and text actions.

For RL code that expects Gymnasium's interface. An action is JSON text, either a tool
call ``{"tool": NAME, "arguments": {...}}`` or the final answer ``{"answer": TEXT}``. An
observation is JSON text (escaped to ASCII, so Gymnasium's ``Text`` space holds it):
after ``reset`` the task (``system_prompt``, ``instruction``, ``tools``), after a call the
tool's answer as the agent sees it (faults applied), after the answer the verdict. The
reward is 1.0 for a passed task and 0.0 otherwise, given when the answer is graded
(``terminated``); ``truncated`` when the tool-call limit is reached. ``reset(seed=S)``
sets the fault plan's seed. Every ``reset`` starts a new episode (``EnvEpisode``); the
wrapper runs it on an event loop of its own, so it is for code without a running loop
(use ``EnvEpisode`` directly in async code).
"""

from __future__ import annotations

import asyncio
import json
import string
from pathlib import Path
from typing import Any

import gymnasium
from gymnasium import spaces
from inspect_ai.model import Model

from occubench.env._episode import EnvEpisode, ToolCallAction
from occubench.env._make import make_episode

MAX_TEXT = 1_000_000
"""Longest observation or action text of the spaces (characters)."""

CHARSET = frozenset(string.printable)
"""Characters of the text spaces: printable ASCII (observations are ASCII-escaped JSON)."""


def ascii_json(value: Any) -> str:
    """JSON text with every non-ASCII character escaped."""
    return json.dumps(value, ensure_ascii=True)


def _observation_text(text: str) -> str:
    try:
        return ascii_json(json.loads(text))
    except (json.JSONDecodeError, RecursionError, ValueError):
        return ascii_json(text)


class OccuBenchEnv(gymnasium.Env[str, str]):
    """One task's environment as a Gymnasium environment (see the module docstring).

    Args:
        dataset: Dataset folder, or ``reference``.
        task_id: The task.
        simulator: The simulator model.
        verifier: The judge (default: the run's combination rule).
        **settings: ``RunConfig`` fields (env mode, faults, seed, with_plan, ...).
    """

    metadata: dict[str, Any] = {"render_modes": []}

    def __init__(
        self,
        dataset: str | Path,
        task_id: int,
        *,
        simulator: str | Model,
        verifier: str | Model | None = None,
        **settings: Any,
    ) -> None:
        self.observation_space = spaces.Text(MAX_TEXT, min_length=0, charset=CHARSET)
        self.action_space = spaces.Text(MAX_TEXT, min_length=1, charset=CHARSET)
        self._make = dict(dataset=dataset, task_id=task_id, simulator=simulator, verifier=verifier)
        self._settings = settings
        self._runner = asyncio.Runner()
        self.episode: EnvEpisode | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        """Start a new episode; the task as observation, its tools in ``info``."""
        super().reset(seed=seed)
        settings = {**self._settings, **({"seed": seed} if seed is not None else {})}
        self.episode = make_episode(**self._make, **settings)  # type: ignore[arg-type]
        start = self._runner.run(self.episode.reset())
        tools = [t.model_dump() for t in start.tools]
        observation = {
            "system_prompt": start.system_prompt,
            "instruction": start.instruction,
            "tools": tools,
        }
        return ascii_json(observation), {"task_id": start.task_id, "tools": tools}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        """Take one action: a tool call or the final answer."""
        if self.episode is None:
            raise RuntimeError("call reset() first")
        episode = self.episode
        try:
            parsed = json.loads(action)
        except (json.JSONDecodeError, RecursionError, ValueError) as e:
            parsed = None
            problem = f"the action is not JSON: {e}"
        if isinstance(parsed, dict) and isinstance(parsed.get("answer"), str):
            grade = self._runner.run(episode.grade(parsed["answer"]))
            verdict = {"passed": grade.passed, "explanation": grade.explanation()}
            graded = {"grade": grade.model_dump(mode="json")}
            return ascii_json(verdict), float(grade.passed), True, False, graded
        if not (isinstance(parsed, dict) and isinstance(parsed.get("tool"), str)):
            if parsed is not None:
                problem = 'an action is {"tool": NAME, "arguments": {...}} or {"answer": TEXT}'
            return ascii_json({"error": problem}), 0.0, False, False, {"refused": "not_json"}
        call = ToolCallAction(tool=parsed["tool"], arguments=parsed.get("arguments"))
        result = self._runner.run(episode.step(call))
        truncated = episode.at_call_limit()
        info: dict[str, Any] = {
            "call_index": result.call_index,
            "refused": None if result.refused is None else result.refused.value,
            "faults": [f.model_dump(mode="json") for f in result.faults],
        }
        return _observation_text(result.observation), 0.0, False, truncated, info

    def close(self) -> None:
        """Close the wrapper's event loop."""
        self._runner.close()
        super().close()

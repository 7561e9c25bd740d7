"""Failed trajectories read out of occubench logs, with everything a diagnosis needs.

A trajectory failed when its sample was scored and did not pass (infrastructure errors
are not failures). Its steps are the agent's tool calls in order, numbered from 1, each with
what the agent saw, the fault injected on it (from the fault log) and the online simulator
checks its kept observation failed (from the episode's steps). A call Inspect refused
(arguments not matching the schema, an unknown tool) never reached the environment: it has
a tool error and no fault or check; the tool layer's call indexes count the others.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ModelConfig
from inspect_ai.scorer import CORRECT
from pydantic import BaseModel, Field

from occubench.agent import StopReason, episode_in
from occubench.config import CONFIG_METADATA, RunConfig
from occubench.grading import SCORER_NAME, Grade
from occubench.results import log_files, log_header, log_samples
from occubench.roles import Role


class TrajectoryStep(BaseModel):
    """One tool call of a failed trajectory."""

    number: int = Field(description="1-based position among the agent's tool calls.")
    said: str = Field(default="", description="The agent's text in the turn that made the call.")
    tool: str = Field(description="Tool called.")
    arguments: dict[str, Any] = Field(description="Arguments as the agent sent them.")
    result: str = Field(description="What the agent got back (text).")
    tool_error: str | None = Field(
        default=None, description="Inspect refused the call (it never reached the environment)."
    )
    fault: str | None = Field(default=None, description="The fault injected on this call.")
    sim_check: str | None = Field(
        default=None, description="Online simulator checks the kept observation failed."
    )


class FailedTrajectory(BaseModel):
    """A scored sample that did not pass, as the diagnosis sees it."""

    key: str = Field(description="run id : task id : epoch.")
    log: str = Field(description="Log file of the sample.")
    agent_model: str
    simulator_model: str | None
    env_mode: str
    task_id: int | str
    epoch: int
    scenario: str
    industry: str
    domain: str
    instruction: str = Field(description="The task as given to the agent.")
    verification_plan: str
    initial_state: dict[str, Any]
    state_description: dict[str, Any]
    steps: list[TrajectoryStep]
    final_answer: str = Field(description="The agent's final answer ('' when it gave none).")
    stop_reason: str | None = Field(description="Why the agent loop ended.")
    checks: list[str] = Field(description="Deterministic checks: passed/failed, with detail.")
    judge_feedback: list[str] = Field(description="The judge's votes and reasons.")
    simulator_suspect: bool | None = Field(description="The online checks marked the sample.")


def _text(message: ChatMessageAssistant | ChatMessageTool) -> str:
    return message.text.strip()


def _steps(sample: EvalSample) -> list[TrajectoryStep]:
    results = {m.tool_call_id: m for m in sample.messages if isinstance(m, ChatMessageTool)}
    steps: list[TrajectoryStep] = []
    for message in sample.messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        for position, call in enumerate(message.tool_calls or []):
            result = results.get(call.id)
            error = result.error if result is not None else None
            steps.append(
                TrajectoryStep(
                    number=len(steps) + 1,
                    said=_text(message) if position == 0 else "",
                    tool=call.function,
                    arguments=call.arguments or {},
                    result="" if result is None else (error.message if error else _text(result)),
                    tool_error=None if error is None else f"{error.type}: {error.message}",
                )
            )
    return steps


def _annotate(steps: list[TrajectoryStep], sample: EvalSample) -> None:
    """Faults and failed checks of the calls that reached the tool layer, on their steps."""
    reached = [s for s in steps if s.tool_error is None]
    episode = episode_in(sample.store)
    for fault in episode.fault_log:
        index = fault.call_index
        if 0 <= index < len(reached) and fault.applied:
            how = "explicit error" if fault.explicit else "degraded observation"
            changes = "; ".join(fault.changes)
            reached[index].fault = f"{how} ({fault.kind}): {changes}"
    for index, step in enumerate(episode.steps):
        check = step.check
        if check is not None and check.suspect and index < len(reached):
            failures = check.kept_failures()
            reached[index].sim_check = "; ".join(f"{f.kind.value}: {f.detail}" for f in failures)


def _grading(sample: EvalSample) -> tuple[list[str], list[str], str]:
    score = (sample.scores or {}).get(SCORER_NAME)
    if score is None:
        return [], [], ""
    grade = Grade.of(score.metadata, passed=score.value == CORRECT)
    checks = [
        f"{'passed' if c.passed else 'FAILED'}: {json.dumps(c.check, ensure_ascii=False)}: "
        f"{c.detail}"
        for c in grade.checks or []
    ]
    votes = [
        f"vote {i}: {'correct' if v.is_correct else 'incorrect'}: {v.feedback}"
        for i, v in enumerate(grade.votes or [], start=1)
    ]
    return checks, votes, score.answer or ""


def _failed(sample: EvalSample) -> bool:
    score = (sample.scores or {}).get(SCORER_NAME)
    return sample.error is None and score is not None and score.value != CORRECT


def read_failures(paths: Iterable[str | Path]) -> list[FailedTrajectory]:
    """Every failed trajectory of the occubench logs under ``paths`` (module doc)."""
    out = []
    for file in log_files(paths):
        header = log_header(file)
        if header.eval.task_registry_name not in (None, "occubench/occubench"):
            continue
        simulator = (header.eval.model_roles or {}).get(Role.SIMULATOR.value)
        config = RunConfig.model_validate((header.eval.metadata or {}).get(CONFIG_METADATA, {}))
        for sample in log_samples(file):
            if not _failed(sample):
                continue
            md = sample.metadata or {}
            task, env = md.get("task", {}), md.get("env", {})
            steps = _steps(sample)
            _annotate(steps, sample)
            checks, votes, answer = _grading(sample)
            episode = episode_in(sample.store)
            out.append(
                FailedTrajectory(
                    key=f"{header.eval.eval_id}:{sample.id}:{sample.epoch}",
                    log=file,
                    agent_model=header.eval.model,
                    simulator_model=simulator.model if isinstance(simulator, ModelConfig) else None,
                    env_mode=config.env_mode.value,
                    task_id=sample.id,
                    epoch=sample.epoch,
                    scenario=str(md.get("scenario", "")),
                    industry=str(md.get("industry", "")),
                    domain=str(md.get("domain", "")),
                    instruction=str(task.get("agent_instruction", "")),
                    verification_plan=str(task.get("verification_plan", "")),
                    initial_state=env.get("task_initial_state", {}),
                    state_description=env.get("state_description", {}),
                    steps=steps,
                    final_answer=answer,
                    stop_reason=None
                    if episode.stop_reason is None
                    else StopReason(episode.stop_reason).value,
                    checks=checks,
                    judge_feedback=votes,
                    simulator_suspect=episode.simulator_suspect,
                )
            )
    return out

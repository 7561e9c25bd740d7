"""The occubench scorer: deterministic checks and a k-vote LLM judge, combined.

Combination rule (one place, documented in the README):
- The judge is the ``verifier`` role. When that role is not bound, the judge is the
  ``simulator`` role, except for tasks that carry deterministic checks: those are then
  graded by their checks alone (offline reference suites need no judge model).
- A task is completed when every layer that ran passed: all checks (if the task has
  checks) and the judge's strict majority of k votes (if a judge ran). Ties fail;
  an invalid vote counts as a failing vote; if all k votes are invalid the sample is
  an infrastructure error, not an agent failure.
"""

from __future__ import annotations

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    Model,
    model_roles,
)
from inspect_ai.scorer import (
    CORRECT,
    INCORRECT,
    Score,
    Scorer,
    Target,
    accuracy,
    grouped,
    scorer,
    stderr,
)
from inspect_ai.solver import TaskState
from inspect_ai.util import collect

from occubench.agent import Episode
from occubench.dataset import EnvConfig, TaskRecord
from occubench.defaults import DEFAULT_VERIFIER_RETRIES, DEFAULT_VERIFIER_VOTES
from occubench.errors import ErrorSource, InfrastructureError
from occubench.grading._checks import run_checks
from occubench.grading._grade import SCORER_NAME, Grade
from occubench.grading._prompt import VERIFIER_REASK, VERIFIER_SYSTEM_PROMPT, verifier_request
from occubench.grading._trajectory import render_trajectory, tool_calls
from occubench.grading._verdict import Vote, ask_verdict, majority
from occubench.roles import Role


class VerifierError(InfrastructureError):
    """No judge vote could be read: an infrastructure error."""

    source = ErrorSource.VERIFIER


def final_answer(state: TaskState) -> str:
    """The agent's final answer: its last message, if that message calls no tool."""
    message = state.output.message if state.output and state.output.choices else None
    if message is None or message.tool_calls:
        return ""
    return message.text


def judge_model(has_checks: bool) -> Model | None:
    """The judge for a task, by the combination rule above."""
    roles = model_roles()
    chosen = roles.get(Role.VERIFIER.value)
    if chosen is None and not has_checks:
        chosen = roles.get(Role.SIMULATOR.value)
    if isinstance(chosen, list):
        raise ValueError(f"role {Role.VERIFIER.value!r} must be one model, not a list")
    return chosen


async def judge_vote(model: Model, request: str, *, index: int, retries: int, cache: bool) -> Vote:
    """One judge vote, re-asked up to ``retries`` times when the output is not a verdict."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=VERIFIER_SYSTEM_PROMPT),
        ChatMessageUser(content=request),
    ]
    policy = CachePolicy(expiry=None, scopes={"vote": str(index)}) if cache else False
    return await ask_verdict(model, messages, retries=retries, reask=VERIFIER_REASK, cache=policy)


@scorer(
    metrics=[accuracy(), stderr(), grouped(accuracy(), "industry", all=False)], name=SCORER_NAME
)
def occubench_scorer(
    votes: int = DEFAULT_VERIFIER_VOTES,
    retries: int = DEFAULT_VERIFIER_RETRIES,
    cache: bool = False,
) -> Scorer:
    """Grade a trajectory with its deterministic checks and a k-vote judge.

    Args:
        votes: k, judge calls per sample (run in parallel).
        retries: Re-asks of one vote whose output is not a verdict.
        cache: Cache judge responses (Inspect's cache, one entry per vote).
    """
    if votes < 1:
        raise ValueError("votes must be at least 1")

    async def score(state: TaskState, target: Target) -> Score:
        task = TaskRecord.model_validate(state.metadata["task"])
        env = EnvConfig.model_validate(state.metadata["env"])
        episode = state.store_as(Episode)
        answer = final_answer(state)
        checks = (
            run_checks(task.checks, tool_calls(state.messages), answer, episode.state)
            if task.checks
            else None
        )
        model = judge_model(bool(task.checks))
        if model is None and not task.checks:
            raise VerifierError("no judge: bind the 'verifier' (or 'simulator') model role")
        cast: list[Vote] | None = None
        if model is not None:
            request = verifier_request(
                instruction=task.agent_instruction,
                initial_state=env.task_initial_state,
                state_description=env.state_description,
                verification_plan=task.verification_plan,
                trajectory=render_trajectory(state.messages),
                final_answer=answer,
            )
            cast = await collect(
                *[
                    judge_vote(model, request, index=i, retries=retries, cache=cache)
                    for i in range(votes)
                ]
            )
            if all(v.is_correct is None for v in cast):
                raise VerifierError(f"all {votes} judge votes were invalid: {cast[0].feedback}")
        judged = None if cast is None else majority(cast)
        grade = Grade(
            passed=all(r.passed for r in checks or []) and judged is not False,
            stop_reason=episode.stop_reason,
            tool_calls=episode.tool_calls,
            checks=checks,
            votes=cast,
            judge_passed=judged,
        )
        return Score(
            value=CORRECT if grade.passed else INCORRECT,
            answer=answer,
            explanation=grade.explanation(),
            metadata=grade.model_dump(mode="json", exclude={"passed"}),
        )

    return score

"""The occubench scorer: deterministic checks and a k-vote LLM judge, combined.

Combination rule (one place, documented in the README):
- The judge is the ``verifier`` role. When that role is not bound, the judge is the
  ``simulator`` role, except for tasks that carry deterministic checks: those are then
  graded by their checks alone (offline reference suites need no judge model).
- A task is completed when every layer that ran passed: all checks (if the task has
  checks) and the judge's strict majority of k votes (if a judge ran). Ties fail;
  an invalid vote counts as a failing vote; if all k votes are invalid the sample is
  an infrastructure error, not an agent failure.
- The exploit guard (``occubench.guard``, unless ``exploit_guard=off``) then reads the
  episode: a pass with evidence that the agent steered the simulator or the judge is
  ``exploit_suspected``, and under ``exploit_guard=zero`` it is graded a failure; an
  observation's success out of its tool's contract that the agent did not ask for is
  ``simulator_off_contract`` (the environment's fault, never the agent's).
"""

from __future__ import annotations

import traceback
from typing import NamedTuple

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
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
from inspect_ai.util import LimitExceededError, collect

from occubench.agent import Episode
from occubench.dataset import EnvConfig, TaskRecord
from occubench.defaults import (
    DEFAULT_VERIFIER_RETRIES,
    DEFAULT_VERIFIER_VOTES,
)
from occubench.errors import BudgetExhausted, ErrorSource, InfrastructureError, UsageError
from occubench.grading._checks import run_checks
from occubench.grading._grade import SCORER_NAME, Grade, SubmittedGrade
from occubench.grading._prompt import (
    VERIFIER_REASK,
    VERIFIER_SYSTEM_PROMPT,
    task_verifier_request,
    verifier_request,
)
from occubench.grading._trajectory import render_trajectory, tool_calls
from occubench.grading._verdict import (
    Vote,
    ask_verdict,
    combined_verdict,
    majority,
    parse_paper_verdict,
)
from occubench.guard import DEFAULT_GUARD, ExploitEvidence, ExploitGuard, find_exploits
from occubench.protocols import MessageStyle
from occubench.roles import Role
from occubench.text import clean_output


class VerifierError(InfrastructureError):
    """No judge vote could be read: an infrastructure error."""

    source = ErrorSource.VERIFIER


def final_answer(state: TaskState) -> str:
    """The agent's final answer: its last message, if that message calls no tool."""
    message = state.output.message if state.output and state.output.choices else None
    if message is None or message.tool_calls:
        return ""
    return message.text


def choose_judge(has_checks: bool, verifier: Model | None, simulator: Model | None) -> Model | None:
    """The judge of a task by the combination rule above, from the models bound."""
    if verifier is None and not has_checks:
        return simulator
    return verifier


def judge_model(has_checks: bool) -> Model | None:
    """The judge for a task in a running eval, by the combination rule above."""
    roles = model_roles()
    verifier, simulator = roles.get(Role.VERIFIER.value), roles.get(Role.SIMULATOR.value)
    if isinstance(verifier, list) or isinstance(simulator, list):
        raise UsageError("the verifier and simulator roles must be one model each, not a list")
    return choose_judge(has_checks, verifier, simulator)


def _vote_cache(index: int, cache: bool) -> CachePolicy | bool:
    """One cache entry per vote index, so the k votes stay k distinct answers."""
    return CachePolicy(expiry=None, scopes={"vote": str(index)}) if cache else False


async def judge_vote(
    model: Model,
    request: str,
    *,
    index: int,
    retries: int,
    cache: bool,
    config: GenerateConfig | None = None,
) -> Vote:
    """One judge vote, re-asked up to ``retries`` times when the output is not a verdict."""
    messages: list[ChatMessage] = [
        ChatMessageSystem(content=VERIFIER_SYSTEM_PROMPT),
        ChatMessageUser(content=request),
    ]
    return await ask_verdict(
        model,
        messages,
        retries=retries,
        reask=VERIFIER_REASK,
        cache=_vote_cache(index, cache),
        config=config,
    )


async def paper_vote(
    model: Model, request: str, *, index: int, cache: bool, config: GenerateConfig
) -> Vote:
    """One paper-style vote: one call, read greedily; any failure is a False vote.

    A failed API call (after the provider's and Inspect's retries) also counts as a
    False vote, as the release counts it; a call the spending limit refused errors the
    sample instead.
    """
    try:
        output = await model.generate(
            [ChatMessageUser(content=request)], cache=_vote_cache(index, cache), config=config
        )
    except (LimitExceededError, BudgetExhausted):  # a limit: the sample errors, no vote
        raise
    except Exception as e:
        return Vote(is_correct=False, feedback=f"Verification error: {type(e).__name__}")
    return parse_paper_verdict(clean_output(output).completion)


async def grade_trajectory(
    task: TaskRecord,
    env: EnvConfig,
    messages: list[ChatMessage],
    answer: str,
    episode: Episode,
    *,
    judge: Model | None,
    votes: int = DEFAULT_VERIFIER_VOTES,
    retries: int = DEFAULT_VERIFIER_RETRIES,
    cache: bool = False,
    style: MessageStyle = MessageStyle.OCCUBENCH,
    max_tokens: int | None = None,
    template: str | None = None,
    guard: ExploitGuard = DEFAULT_GUARD,
) -> Grade:
    """Grade one trajectory: the task's checks and, when a judge is given, its k votes.

    The scorer grades a sample with it; an episode driven from outside Inspect's loop
    (an MCP client's ``submit_answer``, the gym API's ``grade``) grades with it too.

    Args:
        task: The task record (instruction, checks, verification plan).
        env: Its env config (initial state and state description for the judge).
        messages: The conversation: agent turns, tool calls and tool results.
        answer: The agent's final answer ("" when it gave none).
        episode: The episode record (stop reason, tool calls, explicit state).
        judge: The judge model (``choose_judge``), None for checks alone.
        votes: k, judge calls (run in parallel).
        retries: Re-asks of one vote whose output is not a verdict (occubench style).
        cache: Cache judge responses (one entry per vote).
        style: The judge's request and how its verdict is read: occubench's (data
            blocks, strict reading, re-asks, an unreadable vote fails, all unreadable is
            an infrastructure error) or the paper's (one user message, greedy reading,
            any failure a False vote, an API failure included).
        max_tokens: max_tokens of each judge call (None: not set).
        template: The release's own verifier prompt (paper style, ``prompts_from``).
        guard: The exploit guard: off, flag (a suspected pass is reported) or zero (it is
            also graded a failure).

    Raises:
        VerifierError: no judge for a task without checks, or (occubench style) no vote
            was readable.
    """
    checks = (
        run_checks(task.checks, tool_calls(messages), answer, episode.state)
        if task.checks
        else None
    )
    if judge is None and not task.checks:
        raise VerifierError("no judge: bind the 'verifier' (or 'simulator') model role")
    cast: list[Vote] | None = None
    if judge is not None:
        asked = _Judged(votes, retries, cache, style, max_tokens, template)
        cast = await _cast_votes(judge, asked, task, env, messages, answer)
    counts = (
        None if checks is None else sum(r.passed for r in checks),
        None if checks is None else len(checks),
        None if cast is None else sum(v.is_correct is True for v in cast),
        None if cast is None else len(cast),
    )
    read = _read_guard(guard, combined_verdict(*counts), messages, answer, env, episode, cast)
    return Grade(
        passed=combined_verdict(*counts, exploit_zeroed=read.zeroed),
        stop_reason=episode.stop_reason,
        tool_calls=episode.tool_calls,
        checks=checks,
        votes=cast,
        judge_passed=None if cast is None else majority(cast),
        exploit_suspected=read.suspected,
        simulator_off_contract=read.off_contract,
        exploit_zeroed=read.zeroed,
        exploit_evidence=read.evidence,
    )


class _Judged(NamedTuple):
    """How the judge is asked (``grade_trajectory``'s arguments of the same names)."""

    votes: int
    retries: int
    cache: bool
    style: MessageStyle
    max_tokens: int | None
    template: str | None


async def _cast_votes(
    judge: Model,
    asked: _Judged,
    task: TaskRecord,
    env: EnvConfig,
    messages: list[ChatMessage],
    answer: str,
) -> list[Vote]:
    """The judge's k votes on the trajectory, in the layout of ``asked.style``.

    Raises:
        VerifierError: (occubench style) no vote was readable.
    """
    config = GenerateConfig(max_tokens=asked.max_tokens) if asked.max_tokens else GenerateConfig()
    cache, votes = asked.cache, asked.votes
    if asked.style is MessageStyle.PAPER:
        paper = task_verifier_request(task, env, messages, asked.template)
        return await collect(
            *[paper_vote(judge, paper, index=i, cache=cache, config=config) for i in range(votes)]
        )
    request = verifier_request(
        instruction=task.agent_instruction,
        initial_state=env.task_initial_state,
        state_description=env.state_description,
        verification_plan=task.verification_plan,
        trajectory=render_trajectory(messages),
        final_answer=answer,
    )
    cast = await collect(
        *[
            judge_vote(judge, request, index=i, retries=asked.retries, cache=cache, config=config)
            for i in range(votes)
        ]
    )
    if all(v.is_correct is None for v in cast):
        raise VerifierError(f"all {votes} judge votes were invalid: {cast[0].feedback}")
    return cast


class _GuardReading(NamedTuple):
    """What the exploit guard found (its flags None where the guard is off)."""

    evidence: list[ExploitEvidence]
    suspected: bool | None
    off_contract: bool | None
    zeroed: bool


def _read_guard(
    guard: ExploitGuard,
    passed: bool,
    messages: list[ChatMessage],
    answer: str,
    env: EnvConfig,
    episode: Episode,
    cast: list[Vote] | None,
) -> _GuardReading:
    """The guard's reading of a trajectory graded ``passed`` before it looked."""
    if guard is ExploitGuard.OFF:
        return _GuardReading([], None, None, False)
    verdicts = [v.raw or v.feedback for v in cast or []]
    evidence = find_exploits(messages, answer, env, episode.steps, verdicts)
    suspected = passed and any(e.kind.against_agent for e in evidence)
    off_contract = any(not e.kind.against_agent for e in evidence)
    return _GuardReading(
        evidence, suspected, off_contract, suspected and guard is ExploitGuard.ZERO
    )


def grade_score(grade: Grade, answer: str) -> Score:
    """The Inspect score of a grade (its metadata is the grade, ``Grade.of`` reads it)."""
    return Score(
        value=CORRECT if grade.passed else INCORRECT,
        answer=answer,
        explanation=grade.explanation(),
        metadata=grade.model_dump(mode="json", exclude={"passed"}),
    )


VERIFIER_FAILED = "verifier_failed"
"""``Score.reason`` of a sample whose judge failed while regrading (``occubench_scorer``)."""


def verifier_failure(error: Exception) -> Score:
    """An unscored score for a judge that failed: its error, as a ``VerifierError``.

    Regrading turns it into the sample's infrastructure error (source ``verifier``):
    ``explanation`` is the message, ``metadata["traceback"]`` the traceback, which ends
    with the ``VerifierError``, so a log reader finds the source from it.
    """
    cause: BaseException = error
    while isinstance(cause, BaseExceptionGroup) and cause.exceptions:  # the k votes' failures
        cause = cause.exceptions[0]
    if not isinstance(cause, VerifierError):
        try:
            raise VerifierError(f"the judge failed: {type(cause).__name__}: {cause}") from error
        except VerifierError as wrapped:
            cause = wrapped
    return Score.unscored(
        reason=VERIFIER_FAILED,
        explanation=str(cause),
        metadata={"traceback": "".join(traceback.format_exception(cause))},
    )


@scorer(
    metrics=[accuracy(), stderr(), grouped(accuracy(), "industry", all=False)], name=SCORER_NAME
)
def occubench_scorer(
    votes: int = DEFAULT_VERIFIER_VOTES,
    retries: int = DEFAULT_VERIFIER_RETRIES,
    cache: bool = False,
    style: MessageStyle = MessageStyle.OCCUBENCH,
    max_tokens: int | None = None,
    template: str | None = None,
    regrading: bool = False,
    guard: ExploitGuard = DEFAULT_GUARD,
) -> Scorer:
    """Grade a trajectory with its deterministic checks and a k-vote judge.

    Args:
        votes: k, judge calls per sample (run in parallel).
        retries: Re-asks of one vote whose output is not a verdict (occubench style).
        cache: Cache judge responses (Inspect's cache, one entry per vote).
        style: The judge's protocol style (see ``grade_trajectory``).
        max_tokens: max_tokens of each judge call (None: not set).
        template: The release's own verifier prompt (paper style, ``prompts_from``).
        regrading: Grading a recorded trajectory again (``regrade_logs``): a grade given
            when the agent submitted is not reused, and a judge that fails gives an
            unscored score (``verifier_failure``) instead of raising, so that one
            sample's failure does not stop the others.
        guard: The exploit guard (``grade_trajectory``).
    """
    if votes < 1:
        raise UsageError("votes must be at least 1")

    async def score(state: TaskState, target: Target) -> Score:
        given = state.store_as(SubmittedGrade)
        if given.grade is not None and not regrading:  # graded when the agent submitted
            return grade_score(Grade.model_validate(given.grade), given.answer or "")
        task = TaskRecord.model_validate(state.metadata["task"])
        answer = final_answer(state)
        try:
            grade = await grade_trajectory(
                task,
                EnvConfig.model_validate(state.metadata["env"]),
                state.messages,
                answer,
                state.store_as(Episode),
                judge=judge_model(bool(task.checks)),
                votes=votes,
                retries=retries,
                cache=cache,
                style=style,
                max_tokens=max_tokens,
                template=template,
                guard=guard,
            )
        except Exception as e:  # regrading records any failure of the judge
            if not regrading:
                raise
            return verifier_failure(e)
        return grade_score(grade, answer)

    return score

"""The ``occubench/diagnose`` task: each failed trajectory classified by the verifier role.

Its samples are the failed trajectories of the logs it is given (``read_failures``). For
each, the verifier role is asked k times in parallel for a class of the taxonomy and the
step the failure rests on (an unreadable reply is re-asked, then dropped); the plurality
class wins, ties going to the class listed first. Run through the runner (``run_eval``),
the diagnosis gets logs, retries and resume like any run.
"""

from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import collect

from occubench.calls import ask
from occubench.config import split_list
from occubench.defaults import DEFAULT_VERIFIER_RETRIES, DEFAULT_VERIFIER_VOTES
from occubench.diagnosis._failures import read_failures
from occubench.diagnosis._prompt import DIAGNOSIS_REASK, DIAGNOSIS_SYSTEM_PROMPT, diagnosis_request
from occubench.diagnosis._verdict import Diagnosis, DiagnosisParseError, decide, parse_vote
from occubench.errors import ErrorSource, InfrastructureError, UsageError
from occubench.roles import Role

DIAGNOSIS_VERSION = "0.1.0"
DIAGNOSIS_KEY = "diagnosis"
"""Key of the decided ``Diagnosis`` in a sample's metadata and its score's."""
FAILURE_KEY = "failure"
"""Key of the ``FailedTrajectory`` in a sample's metadata."""


class DiagnosisError(InfrastructureError):
    """No diagnosis vote could be read: an infrastructure error."""

    source = ErrorSource.VERIFIER


@solver
def diagnosis_solver(votes: int = DEFAULT_VERIFIER_VOTES, cache: bool = False) -> Solver:
    """Ask the verifier role for k class votes on the sample's failed trajectory."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        model = get_model(role=Role.VERIFIER.value, required=True)
        messages: list[ChatMessage] = [
            ChatMessageSystem(content=DIAGNOSIS_SYSTEM_PROMPT),
            ChatMessageUser(content=state.input_text),
        ]
        asked = await collect(
            *[
                ask(
                    model,
                    messages,
                    parse_vote,
                    attempts=DEFAULT_VERIFIER_RETRIES + 1,
                    reask=lambda _: DIAGNOSIS_REASK,
                    errors=(DiagnosisParseError,),
                    cache=CachePolicy(expiry=None, scopes={"vote": str(i)}) if cache else False,
                )
                for i in range(votes)
            ]
        )
        valid = [a.value for a in asked if a.value is not None]
        if not valid:
            raise DiagnosisError(f"all {votes} diagnosis votes were unreadable: {asked[0].problem}")
        diagnosis = decide(valid, invalid=len(asked) - len(valid))
        state.metadata[DIAGNOSIS_KEY] = diagnosis.model_dump(mode="json")
        return state

    return solve


@scorer(metrics=[], name="diagnosis")
def diagnosis_scorer() -> Scorer:
    """Record the decided class as the sample's score (value: the class)."""

    async def score(state: TaskState, target: Target) -> Score:
        diagnosis = Diagnosis.model_validate(state.metadata[DIAGNOSIS_KEY])
        return Score(
            value=diagnosis.category.value,
            explanation=f"step {diagnosis.evidence_step}: {diagnosis.explanation}",
            metadata=diagnosis.model_dump(mode="json"),
        )

    return score


@task
def diagnose(
    logs: str | list[str], votes: int = DEFAULT_VERIFIER_VOTES, cache: bool = False
) -> Task:
    """Classify every failed trajectory of ``logs`` (files or folders) with k verifier votes.

    Raises:
        UsageError: the logs hold no failed trajectory.
    """
    paths = split_list(logs) or []
    failures = read_failures(paths)
    if not failures:
        raise UsageError(f"no failed trajectory in {', '.join(map(str, paths))}")
    samples = [
        Sample(
            id=f.key,
            input=diagnosis_request(f),
            metadata={FAILURE_KEY: f.model_dump(mode="json")},
        )
        for f in failures
    ]
    return Task(
        dataset=MemoryDataset(samples, name="diagnosis"),
        solver=diagnosis_solver(votes=votes, cache=cache),
        scorer=diagnosis_scorer(),
        fail_on_error=False,
        version=DIAGNOSIS_VERSION,
    )

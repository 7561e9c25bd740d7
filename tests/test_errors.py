"""Where an errored sample's failure comes from: the logged exception's class says."""

import pytest

import occubench.text
from occubench.dataset import DatasetError
from occubench.errors import (
    ErrorSource,
    InfrastructureError,
    SourcedError,
    UsageError,
    error_source,
)
from occubench.providers import PROVIDER_PACKAGES


def logged(qualified_name: str) -> str:
    """A traceback as Inspect logs it, ending with an exception of this class."""
    return (
        "Traceback (most recent call last):\n"
        '  File "/site-packages/occubench/agent/_loop.py", line 10, in run\n'
        "    raise failure\n"
        f"{qualified_name}: it failed\n"
    )


@pytest.mark.parametrize(
    ("name", "source"),
    [
        ("occubench.dataset._errors.DatasetError", ErrorSource.DATASET),
        ("occubench.simulator._simulator.SimulatorError", ErrorSource.SIMULATOR),
        ("occubench.grading._scorer.VerifierError", ErrorSource.VERIFIER),
        ("occubench.costs._budget.BudgetExhausted", ErrorSource.BUDGET),
        ("occubench.serving._record.AgentProgramError", ErrorSource.AGENT),
        ("occubench.errors.InfrastructureError", ErrorSource.HARNESS),
        ("occubench.errors.UsageError", ErrorSource.HARNESS),
        ("builtins.ValueError", ErrorSource.HARNESS),
        ("openai.APIConnectionError", ErrorSource.PROVIDER),
        ("occubench.no_such_module.DatasetError", ErrorSource.HARNESS),
    ],
)
def test_the_source_is_the_logged_class_own(name, source):
    assert error_source(logged(name), PROVIDER_PACKAGES) is source


def test_a_class_named_like_a_sourced_one_is_not_taken_for_it(monkeypatch):
    # the name was once compared: any occubench class called DatasetError counted as one
    impostor = type("DatasetError", (ValueError,), {})
    monkeypatch.setattr(occubench.text, "DatasetError", impostor, raising=False)
    assert (
        error_source(logged("occubench.text.DatasetError"), PROVIDER_PACKAGES)
        is ErrorSource.HARNESS
    )


def test_a_new_sourced_class_is_found_by_its_attribute(monkeypatch):
    late = type("JudgeGone", (SourcedError, RuntimeError), {"source": ErrorSource.VERIFIER})
    monkeypatch.setattr(occubench.text, "JudgeGone", late, raising=False)
    assert (
        error_source(logged("occubench.text.JudgeGone"), PROVIDER_PACKAGES) is ErrorSource.VERIFIER
    )


def test_a_dataset_error_is_bad_input_with_its_own_source():
    assert issubclass(DatasetError, UsageError) and issubclass(DatasetError, SourcedError)
    assert DatasetError.source is ErrorSource.DATASET
    assert not issubclass(InfrastructureError, UsageError)

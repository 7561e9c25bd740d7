"""Infrastructure errors and where they come from.

An infrastructure error (a provider that does not answer, a simulator that never gives
a usable observation, a judge whose votes cannot be read) is not the agent's failure:
the sample is retried, and if it still errors it is recorded and counted apart. Each
errored sample row says which part failed (``ErrorSource``), read from the exception
Inspect logged.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Collection
from enum import Enum, IntEnum
from typing import ClassVar


class ErrorSource(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The part of a run an infrastructure error came from."""

    PROVIDER = "provider"
    """A model API: HTTP errors, timeouts, rate limits, unreadable answers."""
    SIMULATOR = "simulator"
    """The simulator role gave no usable observation."""
    VERIFIER = "verifier"
    """No judge vote could be read."""
    HARNESS = "harness"
    """occubench or Inspect itself (a bug, an unexpected state)."""
    DATASET = "dataset"
    """The dataset could not be loaded."""
    AGENT = "agent"
    """The agent system under test broke down: an agent program that crashed or ran past
    its time limit without an answer (counted apart, like the others, not as a failure)."""
    BUDGET = "budget"
    """The run's spending limit (``--budget``) was reached: the sample was not started, or
    a model call it needed was not made."""
    WORLD = "world"
    """A replayed world does not hold the path the sample took (``--world-mode replay``),
    or holds an answer that cannot be applied."""


class ExitCode(IntEnum):
    """What the exit status of every ``occubench`` command means (the README's table)."""

    OK = 0
    """Done: every sample ran and was scored (or the command did what it was asked)."""
    INCOMPLETE = 1
    """The run stopped before every sample ran (a shard failed, the budget was reached):
    the same command again resumes it."""
    BAD_INPUT = 2
    """Bad input (options, dataset, files) or a failed preflight: nothing was run."""
    SAMPLE_ERRORS = 3
    """Every sample ran, but some ended in infrastructure errors after their retries (not
    scored); the same command again retries them."""
    AGENT_ERRORS = 4
    """Every sample ran and was scored, but some ended on an agent API error that the
    ``paper`` protocol grades as it stands (the paper's counting: the summary names how
    many and the first error). The number may measure the endpoint, not the agent."""
    NOTHING_MADE = 5
    """The command ran but made nothing usable, and said so in one line: a synthesis with
    no task left, a run that asked for faults and had none placed, a run with a world that
    recorded or read no entry. Changing the command (its models, its settings) is needed;
    the same command again makes nothing again."""
    INTERRUPTED = 130
    """Stopped by Ctrl-C (SIGINT) or SIGTERM; finished samples are kept for a resume."""


class UsageError(ValueError):
    """Bad input from the user (options, files, a dataset): one clear line, exit 2.

    Raised where input is checked; commands report it without a traceback
    (``cli._common.user_errors``). Any other exception is a bug and keeps its traceback.
    A subclass of ``ValueError`` so that pydantic validators may raise it.
    """


class SourcedError(Exception):
    """An exception that says which part of a run it comes from (``ErrorSource``).

    ``error_source`` reads ``source`` from the class of a logged exception; an exception
    of any other class is the harness's.
    """

    source: ClassVar[ErrorSource]
    """The part of a run an exception of this class comes from."""


class InfrastructureError(SourcedError, RuntimeError):
    """A failure of the harness's parts, never the agent's: see ``ErrorSource``."""

    source: ClassVar[ErrorSource] = ErrorSource.HARNESS


class BudgetExhausted(InfrastructureError):
    """A sample was not started, or a model call not made: the spending limit could be passed.

    The limit is the run's ``--budget``.
    """

    source = ErrorSource.BUDGET


_LAST_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*)(?::|$)")
_FRAME = re.compile(r'^\s*File "([^"]+)"')


def exception_name(traceback: str) -> str | None:
    """The qualified class name of the exception a logged traceback ends with."""
    for line in reversed(traceback.strip().splitlines()):
        found = _LAST_EXCEPTION.match(line.strip())
        if found and not line.startswith(" "):
            return found.group(1)
    return None


def error_source(traceback: str, provider_packages: Collection[str]) -> ErrorSource:
    """Which part failed, from the traceback Inspect logged for an errored sample.

    An exception of one of ``provider_packages`` (or one raised in their frames: the
    providers' SDKs, ``occubench.providers.PROVIDER_PACKAGES``) is the provider's; an
    occubench exception whose class is a ``SourcedError`` names its own source (the class
    is imported by its logged name and its ``source`` read); anything else is the
    harness's.
    """
    name = exception_name(traceback)
    if name is None:
        return ErrorSource.HARNESS
    module, _, cls = name.rpartition(".")
    frames = [m.group(1) for m in map(_FRAME.match, traceback.splitlines()) if m]
    innermost = frames[-1].replace("\\", "/") if frames else ""
    in_provider = any(f"/{package}/" in innermost for package in provider_packages)
    if module.split(".")[0] in provider_packages or in_provider:
        return ErrorSource.PROVIDER
    if module.startswith("occubench"):
        try:
            found = getattr(importlib.import_module(module), cls, None)
        except ImportError:
            found = None
        if isinstance(found, type) and issubclass(found, SourcedError):
            return found.source
    return ErrorSource.HARNESS

"""Results in the public OccuBench release's own format, read as sample rows.

The release's harness (``occubench/evaluate.py`` of the authors' repository) writes each
run to ``results/<run_name>/``: ``args.json`` (its command-line arguments, ``vars(args)``)
and ``results.jsonl`` (one line per task it evaluated: task, scenario, category, domain,
difficulty, models, mode, fault count and duration, plan, verdict, the verdict's feedback,
the number of tool calls, the trajectory text). ``occubench export --format release``
writes that layout; ``read_release_rows`` reads it, so that the release's results stand
beside occubench's in a report.

A row read from the release is marked ``harness=release`` and is never grouped with an
occubench run. What the release does not record is not recorded: no seed, no token
counts, no time, no judge votes (only the verdict and the feedback of one vote), no
environment name, no errored tasks (the harness writes only the tasks it evaluated).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from occubench.errors import UsageError
from occubench.faults import EnvMode, FaultEngine
from occubench.protocols import Protocol
from occubench.results._row import Harness, SampleRow
from occubench.text import validation_line

RELEASE_RESULTS = "results.jsonl"
"""The per-task results file of a release run folder."""
RELEASE_ARGS = "args.json"
"""The run's arguments beside it."""
MAX_RELEASE_LINE_BYTES = 64 * 2**20
"""Bytes of one results line (a trajectory is most of it): a longer line is refused."""


class ReleaseArgs(BaseModel):
    """``args.json``: the release harness's arguments, field for field (others are kept)."""

    model_config = ConfigDict(extra="allow")

    agent_model: str
    world_model: str = "gpt-4o"
    verifier_model: str | None = None
    env_mode: EnvMode = EnvMode.E0
    fault_count: int = 2
    fault_duration: int = 2
    with_plan: bool = False
    eval_data: str | None = "data/eval_benchmark_solvable.jsonl"
    scenario_pool: str | None = "data/task_scenario_all_pool.jsonl"
    config_dir: str | None = "data/world_model_configs"
    output_dir: str | None = "./results"
    run_name: str | None = None
    max_workers: int | None = 8
    task_ids: list[int] | None = None
    categories: list[str] | None = None
    api_key: str | None = None
    base_url: str | None = None
    debug: bool | None = False


class ReleaseResult(BaseModel):
    """One line of ``results.jsonl``, field for field (others are kept)."""

    model_config = ConfigDict(extra="allow")

    task_id: int
    task_scenario_name: str
    category: str
    domain: str
    difficulty_level: int | None = None
    agent_model: str
    world_model: str
    env_mode: EnvMode
    fault_count: int
    fault_duration: int
    with_plan: bool
    is_correct: bool
    feedback: str
    step_count: int
    trajectory: str


def release_run_name(agent: str, world: str, mode: EnvMode, fc: int, fd: int) -> str:
    """The folder the release names a run (``<agent>__<world>__<mode>[__fc<n>_fd<n>]``).

    A ``/`` in a model name (Inspect's provider prefix) would make a folder of its own:
    it is written ``_``.
    """
    name = f"{agent}__{world}__{mode.value}".replace("/", "_")
    return name if mode is EnvMode.E0 else f"{name}__fc{fc}_fd{fd}"


def is_release_results(path: Path) -> bool:
    """Whether ``path`` is a release run's ``results.jsonl`` (its ``args.json`` beside it)."""
    return path.name == RELEASE_RESULTS and (path.parent / RELEASE_ARGS).is_file()


def release_results(folder: Path) -> list[Path]:
    """Every release run's ``results.jsonl`` under ``folder`` (sorted)."""
    return sorted(p for p in folder.rglob(RELEASE_RESULTS) if is_release_results(p))


def _lines(path: Path) -> list[tuple[int, bytes]]:
    out = []
    with path.open("rb") as f:
        for number, line in enumerate(iter(lambda: f.readline(MAX_RELEASE_LINE_BYTES + 1), b""), 1):
            if len(line) > MAX_RELEASE_LINE_BYTES:
                raise UsageError(f"{path}:{number}: a line longer than {MAX_RELEASE_LINE_BYTES}")
            if line.strip():
                out.append((number, line))
    return out


def _field_error(path: Path, number: int | None, error: ValidationError) -> UsageError:
    at = f"{path}:{number}" if number else str(path)
    return UsageError(f"{at}: {validation_line(error, 'line')}")


def read_release_args(path: Path) -> ReleaseArgs:
    """A release run's ``args.json``.

    Raises:
        UsageError: not a JSON object of the release's arguments (naming the field).
    """
    try:
        return ReleaseArgs.model_validate_json(path.read_bytes())
    except ValidationError as e:
        raise _field_error(path, None, e) from None


def read_release_results(path: Path) -> list[ReleaseResult]:
    """The lines of a release run's ``results.jsonl``.

    Raises:
        UsageError: a line that is not the release's result (naming its line and field).
    """
    found = []
    for number, line in _lines(path):
        try:
            data: Any = json.loads(line)
            found.append(ReleaseResult.model_validate(data))
        except json.JSONDecodeError as e:
            raise UsageError(f"{path}:{number}: not JSON: {e.msg}") from None
        except ValidationError as e:
            raise _field_error(path, number, e) from None
    return found


def read_release_rows(file: str) -> list[SampleRow]:
    """The rows of one release run (``results.jsonl``, its ``args.json`` beside it).

    Raises:
        UsageError: a file that is not the release's format (naming file, line and field).
    """
    path = Path(file)
    args = read_release_args(path.parent / RELEASE_ARGS)
    results = read_release_results(path)
    run_id = "release-" + hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    rows = []
    for result in results:
        mode = result.env_mode
        rows.append(
            SampleRow(
                log=file,
                run_id=run_id,
                harness=Harness.RELEASE,
                agent_model=result.agent_model,
                simulator_model=result.world_model,
                verifier_model=args.verifier_model or result.world_model,
                env_mode=result.env_mode,
                # E0 lines say 0 and 0; the run's setting is its arguments' (as ours)
                fault_count=result.fault_count if mode is not EnvMode.E0 else args.fault_count,
                fault_duration=(
                    result.fault_duration if mode is not EnvMode.E0 else args.fault_duration
                ),
                fault_engine=FaultEngine.PROMPT,  # the release's faults: the simulator's prompt
                protocol=Protocol.PAPER,
                errors_count_as_failures=True,
                seed=None,
                epoch=1,
                task_id=result.task_id,
                scenario=result.task_scenario_name,
                industry=result.category,
                domain=result.domain,
                difficulty=result.difficulty_level or 0,
                passed=result.is_correct,
                error=None,
                stop_reason=None,
                tool_calls=result.step_count,
                wall_time=None,
            )
        )
    return rows

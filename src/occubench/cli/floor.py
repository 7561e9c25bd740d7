"""``occubench floor``: the verifier's floor, measured with null agents.

Each null agent (``occubench.scripted.NullAgent``) is run on the dataset's tasks as a
whole run through the runner (as ``occubench demo`` runs its agents), with the
simulator and verifier given: the grading is the one the user's runs get. The table says
how often that grading passes an agent that does no work; ``--out`` writes it as a
``FloorRecord`` that ``occubench report --floor`` shows beside the leaderboard.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from occubench.cli._common import (
    check_models,
    console,
    exit_with,
    from_options,
    interrupted,
    invoked_command,
    model_roles,
    split_names,
    user_errors,
)
from occubench.cli._options import (
    Display,
    Epochs,
    Limit,
    ModelRole,
    RunPreflight,
    RunSimulatorModel,
    UserModel,
    VerifierModel,
)
from occubench.cli._settings import with_settings
from occubench.cli.run import planned_run
from occubench.config import RunConfig
from occubench.defaults import DEFAULT_FLOOR_LOG_DIR
from occubench.errors import ExitCode, UsageError
from occubench.text import terminal_plain

if TYPE_CHECKING:
    from occubench.results import SampleRow
    from occubench.scale import RunPlan, RunSpec, ShardResult
    from occubench.scripted import NullAgent

NULL_AGENT_NAMES = ("null-answer", "null-one-call", "null-echo")
"""The values of ``occubench.scripted.NullAgent``, for the option's help (the scripted
models load when the command runs; ``tests/cli/test_floor.py`` holds the two alike)."""


NOT_FOR_FLOOR = (
    "agent",
    "agent_args",
    "agent_command",
    "agent_time_limit",
    "submit_tool",
    "world",
    "world_mode",
    "world_conflicts",
    "world_variant",
)
"""``RunConfig`` settings the floor has no option for: the agent is a null agent, and its
answers are neither recorded in nor replayed from a world."""


@with_settings(RunConfig, exclude=NOT_FOR_FLOOR)
def floor(
    ctx: typer.Context,
    simulator_model: RunSimulatorModel = None,
    verifier_model: VerifierModel = None,
    user_model: UserModel = None,
    model_role: ModelRole = None,
    null_agents: Annotated[
        str | None,
        typer.Option(
            metavar="NAME,...",
            help=f"Null agents to run, comma-separated (default: all: "
            f"{', '.join(NULL_AGENT_NAMES)}).",
        ),
    ] = None,
    limit: Limit = None,
    epochs: Epochs = 1,
    log_dir: Annotated[
        str,
        typer.Option(
            help="Folder under which each null agent's run logs to a folder of its own (the "
            "same command again resumes them)."
        ),
    ] = DEFAULT_FLOOR_LOG_DIR,
    out: Annotated[
        Path | None,
        typer.Option(help="Write the floor as JSON here (for occubench report --floor)."),
    ] = None,
    display: Display = "none",
    preflight: RunPreflight = True,
    **settings: Any,
) -> None:
    """Measure the verifier's floor: how often it passes null agents, which do no work.

    Runs each null agent on the selected tasks with the simulator and verifier given
    (null-answer answers at once; null-one-call calls one tool, then gives up;
    null-echo answers with the instruction) and prints each one's pass rate with its
    Wilson 95% interval. A floor above zero is the share of a leaderboard's rate that
    asks for no work at all.
    """
    given: dict[str, Any] = dict(locals())
    given.update(given.pop("settings"))
    command = invoked_command(ctx, given)
    from occubench.scale import RunRequest

    with user_errors():
        agents = null_agents_named(split_names(null_agents))
        config = from_options(RunConfig, given)
        dataset = config.dataset or str(config.dataset_dir().resolve())
        request = RunRequest(
            agent_model=agents[0].model,
            roles=model_roles(given),
            config=config,
            limit=limit,
            epochs=epochs,
            log_root=log_dir,
        )
    specs = floor_runs(planned_run(request), agents)
    if preflight:
        from occubench.scale import Preflight, run_calls

        check_models(Preflight([call for spec in specs for call in run_calls(spec)]))
    rows, results = _run_floor(specs, display, log_dir, command)
    _say_floor(rows, results, dataset, Path(specs[0].config.dataset or "."), out)


def floor_runs(plan: RunPlan, agents: list[NullAgent]) -> list[RunSpec]:
    """One run of the plan for each null agent, each in its own folder under the plan's root."""
    from occubench.scale import absolute_location, run_log_dir

    config = plan.spec.config.model_copy(update={"task_ids": plan.selected})
    specs = []
    for agent in agents:
        spec = plan.spec.model_copy(
            update={"name": agent.value, "agent": agent.model, "config": config}
        )
        where = absolute_location(run_log_dir(spec, 1, plan.log_root))
        specs.append(spec.model_copy(update={"log_dir": where}))
    return specs


def _run_floor(
    specs: list[RunSpec], display: str, log_dir: str, command: str
) -> tuple[list[SampleRow], list[ShardResult]]:
    """Run each null agent's run in turn, as a whole run (exit 130 when interrupted)."""
    from occubench.scale import merged_rows, run_shard, stop_signals, whole_run

    results: list[ShardResult] = []
    stopped = False
    with user_errors(), stop_signals() as stop:
        try:
            for spec in specs:
                console.print(f"Running {spec.agent}...", markup=False, highlight=False)
                results.append(run_shard(whole_run(spec), display=display))
                if results[-1].interrupted:
                    break
        except KeyboardInterrupt:
            stopped = True
        rows = merged_rows(results)
        total = sum(len(spec.config.task_ids or []) * spec.epochs for spec in specs)
        if stopped or stop.signal is not None or any(r.interrupted for r in results):
            interrupted(stop, sum(r.error is None for r in rows), total, log_dir, command)
    return rows, results


def _say_floor(
    rows: list[SampleRow], results: list[ShardResult], dataset: str, folder: Path, out: Path | None
) -> None:
    """Print the floor (and write it to ``out``); exit 1 or 3 when it is not whole."""
    from occubench.dataset import content_digest
    from occubench.report import floor_record, floor_table, floor_verdict, rich_table

    for failed in (r for r in results if not r.success):
        console.print(f"{failed.run}: {failed.error}", markup=False, highlight=False)
    if not rows:
        exit_with(ExitCode.INCOMPLETE)
    with user_errors():
        record = floor_record(rows, dataset, content_digest(folder))
    console.print(rich_table(floor_table(record)))
    console.print(terminal_plain(floor_verdict(record)), markup=False, highlight=False)
    if not all(r.success for r in results):
        console.print("The floor is incomplete; run the same command again to resume.")
        exit_with(ExitCode.INCOMPLETE)
    if out is not None:
        out.write_text(record.model_dump_json(indent=2) + "\n")
        console.print(f"Wrote {out}", markup=False, highlight=False)
    if any(r.error is not None for r in rows):
        console.print(
            "Some samples ended in an infrastructure error (not scored); run the same "
            "command again to retry them."
        )
        exit_with(ExitCode.SAMPLE_ERRORS)


def null_agents_named(names: list[str] | None) -> list[NullAgent]:
    """The null agents asked for (all of them when none is named), in the order given.

    Raises:
        UsageError: a name that is no null agent.
    """
    from occubench.scripted import NullAgent

    known = [agent.value for agent in NullAgent]
    unknown = [name for name in names or [] if name not in known]
    if unknown:
        raise UsageError(f"unknown null agent {', '.join(unknown)}; use {', '.join(known)}")
    return [NullAgent(name) for name in dict.fromkeys(names or known)]

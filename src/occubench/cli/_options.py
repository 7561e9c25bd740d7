"""The options more than one command takes, each declared once (``Annotated`` aliases).

A command writes ``verifier_model: VerifierModel = None``: the alias holds the option's
type, names and help; the default stays with the command (``floor``'s display is
``none``, ``run``'s ``rich``). Options whose meaning is the command's own (what ``--out``
writes, where ``--log-dir`` puts what) are declared by their command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from occubench.cli._settings import EXECUTORS

LogFiles = Annotated[list[str], typer.Argument(help="Inspect log files or folders (recursive).")]
"""The logs a command reads (report, export, bundle, diagnose, regrade)."""

SimulatorModel = Annotated[str, typer.Option(help="Simulator (LES) model.")]
"""The simulator of a command that needs one (serve, openenv, env try)."""

RunSimulatorModel = Annotated[
    str | None,
    typer.Option(help="Simulator (LES) model (required, here or as --model-role simulator=M)."),
]
"""The simulator of a run, which ``--model-role`` may name instead (run, floor)."""

VerifierModel = Annotated[
    str | None,
    typer.Option(
        help="Verifier model, the grading LLM (default: the simulator; tasks with checks "
        "use only checks)."
    ),
]
"""The grading model of a run or a session (run, floor, serve, openenv, play)."""

UserModel = Annotated[
    str | None,
    typer.Option(
        help="The simulated user of tasks with a 'user' brief (required when the selection "
        "has one; tasks without a user never call it)."
    ),
]
"""The simulated user of a run's tasks with a ``user`` brief (run, floor)."""

ModelRole = Annotated[
    list[str] | None,
    typer.Option(
        metavar="ROLE=MODEL",
        help="ROLE=MODEL, as Inspect spells it (repeatable): simulator, verifier, "
        "simulator_fallback, user.",
    ),
]
"""Inspect's spelling of the role models (run, floor)."""

Limit = Annotated[
    int | None, typer.Option(min=1, help="Only the first N tasks of the selection (by id).")
]
"""The first tasks of the selection (run, floor)."""

Epochs = Annotated[int, typer.Option(min=1, help="Runs of each task.")]
"""Runs of each task (run, floor)."""

Display = Annotated[str, typer.Option(help="Inspect display: rich, plain, full or none.")]
"""Inspect's display of an eval (run, floor, diagnose)."""

RunPreflight = Annotated[
    bool,
    typer.Option(
        help="Before the first sample, try every model as the runs call it (each role's "
        "settings and token limit, two turns); a missing key, an unknown model or a "
        "refused setting stops the command (exit 2)."
    ),
]
"""The preflight of the runner's runs (``occubench.scale.run_calls``: run, floor, sweep)."""

ShardExecutor = Annotated[
    str,
    typer.Option(
        metavar="<" + "|".join(EXECUTORS) + ">",
        help="Where shards run: local processes, or Ray tasks (needs the ray extra).",
    ),
]
"""Where a run's shards run (run, sweep)."""

RayAddress = Annotated[
    str | None, typer.Option(help="Ray cluster address (default: start a local Ray instance).")
]
"""The Ray cluster of ``--executor ray`` (run, sweep)."""

Prices = Annotated[
    Path | None,
    typer.Option(
        help="Price table, YAML or JSON: models: {NAME: {input_per_mtok, output_per_mtok}}; "
        "the costs the command shows are priced with it."
    ),
]
"""A price table (run, report, bundle, synth)."""

SessionLogDir = Annotated[
    str, typer.Option(help="Each session logs to a new folder under this one.")
]
"""The folder of a server's sessions (play, serve)."""

Host = Annotated[
    str,
    typer.Option(help="Address to serve on (this machine only by default; keep it local)."),
]
"""The address a local server binds (play, serve, review)."""

Port = Annotated[
    int, typer.Option(help="Port to serve on (0: any free port, said when it starts).")
]
"""The port a local server binds (play, serve, review, openenv)."""

AllowedHost = Annotated[
    list[str],
    typer.Option(
        help="A host name clients may address the server by, besides the loopback names and "
        "--host (repeatable; other Host and Origin headers are refused)."
    ),
]
"""Host names a local server answers to besides the loopback names (play, serve)."""

GeneratorRetries = Annotated[int, typer.Option(help="Re-asks of the generator on unusable output.")]
"""Re-asks of a generator model (synth, converse)."""

GoldWorld = Annotated[
    Path | None,
    typer.Option(
        help="A gold world: each simulator's agreement with it (`audit --gold`) is shown "
        "as the 'against gold' row (--dataset, --protocol, --state-mode, --date as the "
        "gold was written; people, human/NAME, are not audited)."
    ),
]
"""A gold world to compare simulators with (report, compare-simulators)."""

TwinFidelityFiles = Annotated[
    list[Path] | None,
    typer.Option(
        "--twin-fidelity",
        help="Records of simulators measured against the executable twins (occubench audit "
        "--twin --out), repeatable: beside each line its simulator's figures on the line's "
        "environments ('not measured' where they do not cover them), and a table of them.",
    ),
]
"""Twin-fidelity records (report, bundle)."""

BootstrapResamples = Annotated[int, typer.Option(help="Bootstrap resamples.")]
"""Resamples of the bootstrap intervals (report, bundle, leaderboard)."""

BootstrapSeed = Annotated[int, typer.Option(help="Bootstrap seed.")]
"""Seed of the bootstrap resampling (report, bundle, leaderboard)."""

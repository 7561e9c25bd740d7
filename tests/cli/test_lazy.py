"""Commands load when used: listing them or reading a help imports no model library."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import typer
from typer.core import TyperCommand

from occubench.cli import app
from occubench.cli._app import COMMANDS, LazyCommands, load_command

HEAVY = ("inspect_ai", "openai", "pandas", "pyarrow", "matplotlib", "fastapi")
"""What only running a command needs: Inspect, the model SDK, tables, charts, the web server."""

PROBE = """
import importlib, json, sys
commands, before = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for module in before:
    importlib.import_module(module)
from occubench.cli import app
loaded = []
for args in commands:
    try:
        app(args, prog_name="occubench")
    except SystemExit:
        pass
    loaded.append(sorted(m for m in {heavy!r} if m in sys.modules))
print(json.dumps(loaded), file=sys.stderr)
"""


def loaded_after(commands: list[list[str]], cwd, before: tuple[str, ...] = ()) -> list[list[str]]:
    """The heavy packages in ``sys.modules`` after each command, run in turn in one interpreter.

    ``before``: modules imported first (the probe's control).
    """
    code = PROBE.format(heavy=HEAVY)
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(commands), json.dumps(before)],
        capture_output=True,
        text=True,
        check=True,
        cwd=cwd,
    )
    return json.loads(done.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args", [["--version"], ["--help"], ["run", "--help"]], ids=lambda a: " ".join(a)
)
def test_version_and_help_import_no_model_library(args, tmp_path):
    assert loaded_after([args], tmp_path) == [[]]


def every_help() -> list[list[str]]:
    """``COMMAND --help`` for every command and subcommand."""
    root = typer_root()
    ctx = typer.Context(root, info_name="occubench")
    helps = []
    for name in COMMANDS:
        command = root.get_command(ctx, name)
        helps.append([name, "--help"])
        if hasattr(command, "list_commands"):  # a group
            helps += [[name, sub, "--help"] for sub in command.list_commands(ctx)]
    return helps


def test_no_command_help_imports_a_model_library(tmp_path):
    helps = every_help()
    assert len(helps) > len(COMMANDS)  # the groups' subcommands too
    loaded = loaded_after(helps, tmp_path)
    assert dict(zip(map(" ".join, helps), loaded, strict=True)) == {" ".join(h): [] for h in helps}


def test_the_probe_sees_a_model_library(tmp_path):
    loaded = loaded_after([["--version"]], tmp_path, before=("occubench.scale",))
    assert loaded[0][:1] == ["inspect_ai"]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_listed_summary_is_the_commands_own(name):
    command = load_command(name)
    declared = TyperCommand(name, help=COMMANDS[name].summary)
    for limit in (30, 45, 74, 1000):
        assert declared.get_short_help_str(limit) == command.get_short_help_str(limit)


def test_root_lists_every_command_and_finds_only_those():
    root = typer_root()
    ctx = typer.Context(root, info_name="occubench")
    assert root.list_commands(ctx) == list(COMMANDS)
    assert root.get_command(ctx, "no-such-command") is None
    assert root.get_command(ctx, "verify").epilog  # the bundle limits, made when loaded


def typer_root() -> LazyCommands:
    root = typer.main.get_command(app)
    assert isinstance(root, LazyCommands)
    return root

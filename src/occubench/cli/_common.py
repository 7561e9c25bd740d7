"""Helpers shared by the commands: dataset options, clean error reports, exit codes.

Every command exits with an ``occubench.errors.ExitCode``: 0 done, 1 incomplete (resume),
2 bad input or a failed preflight, 3 samples ended in infrastructure errors, 4 samples
graded after an agent API error (the paper's counting), 130 interrupted.
"""

from __future__ import annotations

import ipaddress
import shlex
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console

from occubench.cli._fit import fitted
from occubench.dataset import DatasetError, resolve_dataset_dir
from occubench.defaults import DEFAULT_ALLOWED_HOSTS
from occubench.errors import ExitCode, UsageError
from occubench.roles import Role
from occubench.text import terminal_text

if TYPE_CHECKING:
    from occubench.results import SampleRow
    from occubench.scale import Interruption, Preflight, PreflightFailure


class _Console(Console):
    """The commands' console: every table printed is fitted to its width (``_fit``), never cropped.

    A table whose words cannot fit the console is shown as records (``_fit``), never
    cut at its edge.
    """

    def print(self, *objects: Any, **kwargs: Any) -> None:
        kwargs.setdefault("crop", False)
        super().print(*(fitted(o, self) for o in objects), **kwargs)


console: Console = _Console()
err_console: Console = _Console(stderr=True)


def exit_with(code: ExitCode) -> NoReturn:
    """End the command with this exit code."""
    raise typer.Exit(int(code))


BAD_INPUT_ERRORS: tuple[type[Exception], ...] = (UsageError, ValidationError, FileNotFoundError)
"""What a command reports as bad input: ``UsageError`` (``DatasetError`` among them), a
pydantic model refusing what the user gave, a file or folder the user named that is not
there. Any other exception, a ``ValueError`` included, is a bug: it keeps its traceback."""


@contextmanager
def user_errors() -> Iterator[None]:
    """Report bad input (``BAD_INPUT_ERRORS``) as a clear message and exit 2, no traceback.

    Messages may quote the input, so they are printed with control sequences stripped
    and rich markup escaped. A log folder that cannot take the run (``LogFolderError``)
    is one line too, with exit code 1. Anything else propagates with its traceback.
    """
    try:
        yield
    except DatasetError as e:
        count = len(e.issues)
        err_console.print(f"[bold red]Dataset error[/]: {count} problem(s)", highlight=False)
        for issue in e.issues:
            err_console.print(f"  - {terminal_text(issue)}", highlight=False)
        exit_with(ExitCode.BAD_INPUT)
    except ValidationError as e:
        for err in e.errors():
            line = terminal_text(error_line(err))
            err_console.print(f"[bold red]Error[/]: {line}", highlight=False)
        exit_with(ExitCode.BAD_INPUT)
    except BAD_INPUT_ERRORS as e:
        err_console.print(f"[bold red]Error[/]: {terminal_text(e)}", highlight=False)
        exit_with(ExitCode.BAD_INPUT)
    except RuntimeError as e:
        from occubench.scale import LogFolderError  # loaded already by whatever raised it

        if not isinstance(e, LogFolderError):
            raise
        # not bad input: the folder is busy, read-only or full
        err_console.print(f"[bold red]Error[/]: {terminal_text(e)}", highlight=False)
        exit_with(ExitCode.INCOMPLETE)


def error_line(err: Mapping[str, Any]) -> str:
    """One pydantic error as ``where: what (got VALUE)``; a large or nested input unquoted."""
    where = ".".join(str(p) for p in err["loc"])
    value = err.get("input")
    shown = repr(value) if not isinstance(value, dict | list) and len(repr(value)) <= 80 else ""
    message = str(err["msg"])
    return (f"{where}: " if where else "") + message + (f" (got {shown})" if shown else "")


_NAMES = ("scenario", "industry", "domain")


def terminal_rows(rows: Sequence[SampleRow]) -> list[SampleRow]:
    """Rows whose dataset names are safe in a terminal table (for the run summary).

    A dataset is input like any other: a scenario, industry or domain name may hold
    escape sequences (cursor moves, a new window title, hidden text) or rich markup (a
    stray ``[/]`` would even crash the table). Both are neutralised by ``terminal_text``.
    """
    return [r.model_copy(update={n: terminal_text(getattr(r, n)) for n in _NAMES}) for r in rows]


def is_loopback(host: str) -> bool:
    """Whether a bind address reaches this machine only (``localhost``, 127.0.0.0/8, ::1)."""
    if host.strip("[]").lower() in DEFAULT_ALLOWED_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def warn_if_exposed(host: str, consequence: str) -> None:
    """Warn (stderr) that a server bound to ``host`` can be reached from other machines.

    Nothing when ``host`` is a loopback address; ``consequence`` says what anyone who
    reaches it can do.
    """
    if not is_loopback(host):
        err_console.print(f"Warning: serving on {host}: {consequence}", markup=False)


def dataset_dir(value: str | Path | None) -> Path:
    """The dataset folder from the option or the environment (see ``resolve_dataset_dir``)."""
    return resolve_dataset_dir(value)


M = TypeVar("M", bound=BaseModel)


def from_options(model: type[M], options: Mapping[str, Any]) -> M:
    """A model (``RunConfig``, ``EvalOptions``) from the command's options of its field names.

    Fields the command has no option for keep their defaults.
    """
    return model.model_validate({n: options[n] for n in model.model_fields if n in options})


def split_names(value: str | None) -> list[str] | None:
    """Names from a comma-separated option (None when it is empty or not given)."""
    names = [part.strip() for part in (value or "").split(",") if part.strip()]
    return names or None


def check_models(
    models: Mapping[Role, str] | Iterable[tuple[Role, str]] | Preflight,
    follow_up: bool = True,
) -> float | None:
    """The preflight (``occubench.scale.Preflight``): one line per unusable model, exit 2.

    ``models``: a preflight made for the runs (``occubench.scale.run_calls``), or models
    by role, tried with none of their roles' settings. Nothing has started when it fails:
    no log folder, no sample. With ``follow_up`` the second turn of each round trip is
    tried here too; without it the caller tries it (``Preflight.follow_up``) while its
    run starts. Returns the seconds the fastest model took to answer its first turn
    (None when none was asked).
    """
    from occubench.scale import Preflight, role_calls  # the providers: when models are checked

    checks = models if isinstance(models, Preflight) else Preflight(role_calls(models))
    report = checks.check()
    failures = report.failures or (checks.follow_up() if follow_up else [])
    preflight_failed(failures)
    return report.latency


def stopped_by_preflight(lines: Sequence[str], kept: int, total: int, where: str) -> NoReturn:
    """The run stopped on the preflight's second turn: each failure, what was kept, exit 2."""
    _say_failures(lines)
    console.print(
        f"The run stopped: {kept} of {total} samples finished and are kept in {where}; "
        "fix the setting and run the command again.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    exit_with(ExitCode.BAD_INPUT)


def preflight_failed(failures: Sequence[PreflightFailure]) -> None:
    """Say each failure on one line and exit 2 (nothing when there is none)."""
    _say_failures([failure.line() for failure in failures])
    if failures:
        exit_with(ExitCode.BAD_INPUT)


def _say_failures(lines: Sequence[str]) -> None:
    """``Preflight failed: <line>`` for each, on standard error."""
    for line in lines:
        err_console.print(
            f"Preflight failed: {terminal_text(line)}",
            markup=False,
            highlight=False,
            soft_wrap=True,
        )


def _option_text(param: Any, value: Any) -> list[str]:
    """The words that give ``param`` (a click parameter) this value on a command line."""

    def word(v: Any) -> str:
        return str(v.value if isinstance(v, Enum) else v)

    if param.param_type_name == "argument":
        return [word(v) for v in value] if isinstance(value, list | tuple) else [word(value)]
    name = max(param.opts, key=len)
    if param.is_flag:
        if param.secondary_opts:
            return [name if value else max(param.secondary_opts, key=len)]
        return [name] if value else []
    values = value if param.multiple and isinstance(value, list | tuple) else [value]
    return [text for v in values for text in (name, word(v))]


def invoked_command(ctx: typer.Context, values: Mapping[str, Any]) -> str:
    """The command as invoked, with the options given on the command line, shell-quoted.

    Used to tell the user the exact command that resumes a run; options left at their
    defaults are left out. ``values`` are the command's parameters by name (its
    ``locals()``: typer hands them to the function, not to ``ctx.params``). Typer runs
    its own copy of click, so parameters and their sources are read by attribute and name.
    """
    words = ["occubench", ctx.info_name or ""]
    for param in ctx.command.params:
        if param.name is None or param.name not in values:
            continue
        source = ctx.get_parameter_source(param.name)
        if source is None or source.name != "COMMANDLINE":
            continue
        words += _option_text(param, values[param.name])
    return shlex.join(w for w in words if w)


def interrupted(stop: Interruption, kept: int, total: int, where: str, command: str) -> NoReturn:
    """Report an interrupted run (what was kept, ``command`` to resume) and exit 130.

    A run that stopped itself (``stop.cause``: the preflight's second turn was refused)
    says why instead, and exits 2.
    """
    if stop.cause:
        stopped_by_preflight(stop.cause, kept, total, where)
    signal_name = stop.name or "SIGINT"
    console.print(
        f"Interrupted ({signal_name}): {kept} of {total} samples finished and are kept in {where}.",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    console.print("Run the same command to resume:", markup=False, highlight=False)
    console.print(f"  {command}", markup=False, highlight=False, soft_wrap=True)
    exit_with(ExitCode.INTERRUPTED)


_ROLE_OPTIONS = {
    Role.SIMULATOR: "simulator_model",
    Role.VERIFIER: "verifier_model",
    Role.SIMULATOR_FALLBACK: "sim_fallback_model",
    Role.USER: "user_model",
}
"""The roles a run binds and the option that names each one's model."""


def model_roles(given: Mapping[str, Any]) -> dict[Role, str]:
    """The model of each role of a run, from ``--simulator-model`` etc. and ``--model-role``.

    ``--model-role ROLE=MODEL`` (repeatable) is Inspect's spelling of the same thing.

    Raises:
        UsageError: an unknown role, a role named twice with two models, no simulator.
    """
    roles = {role: given[name] for role, name in _ROLE_OPTIONS.items() if given.get(name)}
    for item in given.get("model_role") or []:
        name, sep, model = item.partition("=")
        allowed = {role.value: role for role in _ROLE_OPTIONS}
        if not sep or not model.strip():
            raise UsageError(f"--model-role {item!r}: give ROLE=MODEL, e.g. simulator=openai/gpt-5")
        role = allowed.get(name.strip().lower())
        if role is None:
            raise UsageError(
                f"--model-role {item!r}: unknown role {name!r}; use {', '.join(allowed)}"
            )
        if roles.get(role, model.strip()) != model.strip():
            raise UsageError(f"two models for the {role.value} role: {roles[role]}, {model}")
        roles[role] = model.strip()
    if Role.SIMULATOR not in roles:
        raise UsageError(
            "no simulator model: give --simulator-model MODEL (or --model-role simulator=MODEL)"
        )
    return {role: roles[role] for role in _ROLE_OPTIONS if role in roles}

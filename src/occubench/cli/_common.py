"""Helpers shared by the commands: dataset options and clean error reports."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import typer
from pydantic import BaseModel, ValidationError
from rich.console import Console

from occubench.analysis import SampleRow, terminal_text
from occubench.dataset import DatasetError, resolve_dataset_dir
from occubench.scale import LogFolderError

console = Console()
err_console = Console(stderr=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report bad input as a clear message and exit 2, without a traceback.

    Messages may quote the input, so they are printed with control sequences stripped
    and rich markup escaped. A log folder that cannot take the run (``LogFolderError``)
    is one line too, with exit code 1.
    """
    try:
        yield
    except DatasetError as e:
        count = len(e.issues)
        err_console.print(f"[bold red]Dataset error[/]: {count} problem(s)", highlight=False)
        for issue in e.issues:
            err_console.print(f"  - {terminal_text(issue)}", highlight=False)
        raise typer.Exit(2) from None
    except ValidationError as e:
        for err in e.errors():
            line = terminal_text(error_line(err))
            err_console.print(f"[bold red]Error[/]: {line}", highlight=False)
        raise typer.Exit(2) from None
    except (ValueError, FileNotFoundError) as e:
        err_console.print(f"[bold red]Error[/]: {terminal_text(e)}", highlight=False)
        raise typer.Exit(2) from None
    except LogFolderError as e:  # not bad input: the folder is busy, read-only or full
        err_console.print(f"[bold red]Error[/]: {terminal_text(e)}", highlight=False)
        raise typer.Exit(1) from None


def error_line(err: Mapping[str, Any]) -> str:
    """One pydantic error as ``where: what (got VALUE)``; a large or nested input unquoted."""
    where = ".".join(str(p) for p in err["loc"])
    value = err.get("input")
    shown = repr(value) if not isinstance(value, dict | list) and len(repr(value)) <= 80 else ""
    return (f"{where}: " if where else "") + err["msg"] + (f" (got {shown})" if shown else "")


_NAMES = ("scenario", "industry", "domain")


def terminal_rows(rows: Sequence[SampleRow]) -> list[SampleRow]:
    """Rows whose dataset names are safe in a terminal table (for the run summary).

    A dataset is input like any other: a scenario, industry or domain name may hold
    escape sequences (cursor moves, a new window title, hidden text) or rich markup (a
    stray ``[/]`` would even crash the table). Both are neutralised by ``terminal_text``.
    """
    return [r.model_copy(update={n: terminal_text(getattr(r, n)) for n in _NAMES}) for r in rows]


def dataset_dir(value: str | Path | None) -> Path:
    """The dataset folder from the option or the environment (see ``resolve_dataset_dir``)."""
    return resolve_dataset_dir(value)


M = TypeVar("M", bound=BaseModel)


def from_options(model: type[M], options: Mapping[str, Any]) -> M:
    """A model (``RunConfig``, ``EvalOptions``) from the command's options of its field names."""
    return model.model_validate({name: options[name] for name in model.model_fields})


def split_names(value: str | None) -> list[str] | None:
    """Names from a comma-separated option (None when it is empty or not given)."""
    names = [part.strip() for part in (value or "").split(",") if part.strip()]
    return names or None

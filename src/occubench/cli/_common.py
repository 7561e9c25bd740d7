"""Helpers shared by the commands: dataset options and clean error reports."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from pydantic import ValidationError
from rich.console import Console

from occubench.dataset import DatasetError

console = Console()
err_console = Console(stderr=True)


@contextmanager
def user_errors() -> Iterator[None]:
    """Report bad input as a clear message and exit 2, without a traceback."""
    try:
        yield
    except DatasetError as e:
        err_console.print(f"[bold red]Dataset error[/]: {len(e.issues)} problem(s)", highlight=False)
        for issue in e.issues:
            err_console.print(f"  - {issue}", markup=False, highlight=False)
        raise typer.Exit(2) from None
    except ValidationError as e:
        for err in e.errors():
            where = ".".join(str(p) for p in err["loc"])
            err_console.print(
                f"[bold red]Error[/]: {where}: {err['msg']} (got {err['input']!r})", highlight=False
            )
        raise typer.Exit(2) from None
    except (ValueError, FileNotFoundError) as e:
        err_console.print(f"[bold red]Error[/]: {e}", highlight=False)
        raise typer.Exit(2) from None


def dataset_dir(value: Path | None) -> Path:
    """The dataset folder from the option or the environment (see ``resolve_dataset_dir``)."""
    from occubench.task import resolve_dataset_dir

    return resolve_dataset_dir(value)

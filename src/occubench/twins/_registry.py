"""Which twins there are: the package's own, and a folder of twins named on the command line.

The package's twins (``occubench.twins.envs``, one module per environment) load by
default. A user's twins are code: they load only from a folder the user names
(``--twins DIR``), file by file under module names of their own, never from the current
folder or a dataset.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import pkgutil
import sys
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import ModuleType

from occubench.dataset import EnvConfig
from occubench.errors import UsageError
from occubench.twins import envs
from occubench.twins._twin import Twin

MAX_TWIN_FILES = 500
"""The most ``.py`` files a folder of twins may hold."""


def _twins_of(module: ModuleType) -> list[type[Twin]]:
    return [
        value
        for value in vars(module).values()
        if inspect.isclass(value)
        and issubclass(value, Twin)
        and value is not Twin
        and value.__module__ == module.__name__
        and value.environment
    ]


def _by_environment(found: list[type[Twin]], where: str) -> dict[str, type[Twin]]:
    out: dict[str, type[Twin]] = {}
    for twin in found:
        if twin.environment in out:
            raise UsageError(f"{where}: two twins of environment {twin.environment!r}")
        out[twin.environment] = twin
    return out


@cache
def package_twins() -> Mapping[str, type[Twin]]:
    """The package's own twins by environment name."""
    found: list[type[Twin]] = []
    for info in pkgutil.iter_modules(envs.__path__):
        found += _twins_of(importlib.import_module(f"{envs.__name__}.{info.name}"))
    return _by_environment(found, "occubench.twins.envs")


def load_twins(folder: Path) -> dict[str, type[Twin]]:
    """The twins of a folder the user named (each ``*.py`` file, not its subfolders)."""
    if not folder.is_dir():
        raise UsageError(f"{folder}: not a folder of twins")
    files = sorted(folder.glob("*.py"))
    if len(files) > MAX_TWIN_FILES:
        raise UsageError(f"{folder}: more than {MAX_TWIN_FILES} .py files")
    found: list[type[Twin]] = []
    for path in files:
        name = f"occubench_user_twins_{abs(hash(path.resolve()))}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"{path}: cannot be loaded as a Python module")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as error:  # a user's file: any failure is their input's
            sys.modules.pop(name, None)
            raise UsageError(
                f"{path}: loading it failed: {type(error).__name__}: {error}"
            ) from None
        found += _twins_of(module)
    return _by_environment(found, str(folder))


def twins(folder: Path | None = None) -> dict[str, type[Twin]]:
    """The package's twins, with a user's folder of twins over them where one is named."""
    out = dict(package_twins())
    if folder is not None:
        out.update(load_twins(folder))
    return out


def twin_for(env: EnvConfig, folder: Path | None = None) -> Twin | None:
    """A fresh twin of ``env`` (None: no twin of that environment)."""
    twin = twins(folder).get(env.environment_name)
    return None if twin is None else twin(env)

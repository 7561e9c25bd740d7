"""Packages whose public names load with their module on first use.

A command's options read a few light names of a package (a choice, a constant) without
importing the rest of it, and with it Inspect and the model libraries. The package keeps
a fixed table of each public name's module and sets ``__getattr__ = lazy_names(...)``
(PEP 562); type checkers see the names through imports under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, modules: Mapping[str, str]) -> Callable[[str], Any]:
    """The module ``__getattr__`` of ``package``: a name of ``modules`` imported once, on use.

    Args:
        package: The package's ``__name__``.
        modules: Each public name and the private module (``_name``) that defines it; only
            these names are ever imported (nothing taken from input).
    """
    namespace = sys.modules[package].__dict__

    def load(name: str) -> Any:
        """A public name, its module imported on first use."""
        if name not in modules:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{modules[name]}"), name)
        namespace[name] = value
        return value

    return load

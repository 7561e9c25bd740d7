"""The ``occubench`` command: thin wrappers over library functions."""

from occubench.cli._app import app, main

__all__ = ["app", "main"]

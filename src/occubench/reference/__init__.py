"""Offline reference models: scripted behaviours and their Inspect provider."""

from occubench.reference._behaviours import BEHAVIOURS, Behaviour, Reply, example_arguments

__all__ = ["BEHAVIOURS", "Behaviour", "Reply", "example_arguments"]

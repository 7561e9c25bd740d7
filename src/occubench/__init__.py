"""occubench: evaluate AI agents on professional work inside Language Environment Simulators."""

__version__ = "0.2.0"

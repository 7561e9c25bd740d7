"""occubench: evaluate AI agents on professional work inside Language Environment Simulators."""

__version__ = "0.1.0"

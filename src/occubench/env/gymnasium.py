"""The Gymnasium-compatible wrapper (needs the ``gym`` extra: ``pip install 'occubench[gym]'``)."""

from occubench.env._gymnasium import CHARSET, MAX_TEXT, OccuBenchEnv, ascii_json

__all__ = ["CHARSET", "MAX_TEXT", "OccuBenchEnv", "ascii_json"]

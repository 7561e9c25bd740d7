"""Colours of the report and the contrast of text on them (WCAG 2 relative luminance).

Text on a chart's coloured cell is black or white, whichever contrasts more with the
cell (``text_colour``): one of the two always reaches at least 4.58:1, above WCAG AA
(4.5:1). The HTML tables' rate colours are light enough that their dark text passes
AA everywhere, muted interval text included (``tests/report/test_contrast.py``).
"""

from __future__ import annotations

import colorsys
import math

AA_TEXT = 4.5
"""WCAG AA minimum contrast for normal text."""

DARK_TEXT = "#1a1a1a"
"""Text of the HTML report."""
BLACK = "#000000"
WHITE = "#ffffff"
MUTED_TEXT = "#3d3d3d"
"""Interval and n text beside a rate in a coloured cell."""
UNDEFINED = "#eeeeee"
"""Background of a cell without a rate."""


def hex_rgb(colour: str) -> tuple[float, float, float]:
    """Return ``#rrggbb`` as three floats in [0, 1]."""
    value = colour.lstrip("#")
    if len(value) != 6:
        raise ValueError(f"expected a #rrggbb colour, got {colour!r}")
    return tuple(int(value[i : i + 2], 16) / 255 for i in (0, 2, 4))  # type: ignore[return-value]


def rgb_hex(rgb: tuple[float, float, float]) -> str:
    """Return three floats in [0, 1] as ``#rrggbb``."""
    return "#" + "".join(f"{round(255 * min(1.0, max(0.0, c))):02x}" for c in rgb)


def luminance(colour: str | tuple[float, float, float]) -> float:
    """WCAG 2 relative luminance of an sRGB colour (``#rrggbb`` or floats in [0, 1])."""
    rgb = hex_rgb(colour) if isinstance(colour, str) else colour[:3]

    def linear(c: float) -> float:
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (linear(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(
    a: str | tuple[float, float, float], b: str | tuple[float, float, float]
) -> float:
    """WCAG contrast ratio of two colours, from 1 (same) to 21 (black on white)."""
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def text_colour(background: str | tuple[float, float, float]) -> str:
    """Black or white text, whichever contrasts more with ``background``."""
    dark, light = contrast_ratio(BLACK, background), contrast_ratio(WHITE, background)
    return BLACK if dark >= light else WHITE


def heat(rate: float) -> str:
    """Background of a rate cell: red (0) through yellow to green (1); grey when undefined."""
    if math.isnan(rate):
        return UNDEFINED
    return rgb_hex(colorsys.hls_to_rgb(rate / 3, 0.82, 0.7))

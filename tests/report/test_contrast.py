"""Readable labels: WCAG 2 contrast of the report's text on its coloured cells."""

import numpy as np
import pytest
from matplotlib import colormaps

from occubench.report import contrast_ratio, heat, text_colour
from occubench.report._contrast import AA_TEXT, DARK_TEXT, MUTED_TEXT, UNDEFINED, luminance
from occubench.report._plots import AGREEMENT_MAP, RATE_MAP


def test_contrast_matches_the_wcag_definition():
    assert contrast_ratio("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast_ratio("#777777", "#777777") == pytest.approx(1.0)
    assert luminance("#ffffff") == pytest.approx(1.0) and luminance("#000000") == 0.0
    # a value checked by hand: #767676 on white is the lightest grey passing AA, 4.54:1
    assert contrast_ratio("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)
    assert contrast_ratio("#777777", "#ffffff") < AA_TEXT


@pytest.mark.parametrize("rate", [i / 100 for i in range(101)])
def test_html_rate_cells_are_readable(rate):
    background = heat(rate)
    assert contrast_ratio(DARK_TEXT, background) >= AA_TEXT
    assert contrast_ratio(MUTED_TEXT, background) >= AA_TEXT  # the interval and n beside it


def test_undefined_cells_are_readable():
    assert heat(float("nan")) == UNDEFINED
    assert contrast_ratio(MUTED_TEXT, UNDEFINED) >= AA_TEXT


@pytest.mark.parametrize("name", [RATE_MAP, AGREEMENT_MAP])
def test_chart_cell_labels_are_readable_on_every_colour(name):
    colours = colormaps[name]
    ratios = [
        contrast_ratio(text_colour(tuple(colours(v)[:3])), tuple(colours(v)[:3]))
        for v in np.linspace(0, 1, 257)
    ]
    assert min(ratios) >= AA_TEXT


def test_dark_green_cells_get_white_labels():
    # black on the dark green of 100% was the unreadable label of the old heat map
    assert text_colour(tuple(colormaps[RATE_MAP](1.0)[:3])) == "#ffffff"

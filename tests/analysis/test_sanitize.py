"""Model text in Markdown and CSV files: nothing live in Markdown, no formula in a spreadsheet.

Markdown is checked by rendering it (markdown-it: CommonMark with GitHub's tables and
strikethrough, and with linkify when linkify-it is installed): a link, an image, an
autolink or HTML written by a model must come out as text, the report's own table as
a table.
"""

from __future__ import annotations

import csv
import html
import io
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from occubench.text._sanitize import (
    csv_text,
    from_spreadsheet_cell,
    markdown_cell,
    spreadsheet_cell,
)

LIVE_MARKDOWN = [
    "[x](javascript:alert(1))",
    "![i](http://evil.example/x.png)",
    "![i](http://evil.example/x.png) then [a](b)",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "<http://evil.example>",
    "&#106;avascript&colon;alert(1)",
    "[x][ref]",
    "[x]: http://evil.example",
    "[^note]",
    "\\[x](y)",
    "**bold** _em_ `code` ~~gone~~ $x^2$",
    "# heading",
    "- item",
    "1. item",
    "2) item",
    "---",
    "***",
    "> quote",
    "a | b",
]
AUTOLINKS = [
    "http://evil.example/x",
    "HTTPS://1.2.3.4/x",
    "ftp://evil.example",
    "//1.2.3.4/x",
    "//evil.example",
    "www.evil.example",
    "evil.example",
    "mallory@evil.example",
    "mailto:mallory@evil.example",
    "xmpp:mallory@evil.example",
]
OWN_TAGS = re.compile(r"</?(?:p|ul|ol|li|table|thead|tbody|tr|th|td|h3)(?: style=\"[^\"]*\")?>")


def rendered(text: str, renderer: MarkdownIt) -> list[str]:
    """The HTML tags ``text`` renders to, the table's and list's own left out.

    The renderer keeps every link (markdown-it drops ``javascript:`` ones, not every
    renderer does).
    """
    renderer.validateLink = lambda url: True
    return re.findall(r"<[^>]+>", OWN_TAGS.sub("", renderer.render(text)))


def contexts(cell: str) -> list[str]:
    """Where the report puts model text: a table cell, a list item, a paragraph, a title."""
    return [
        f"| a |\n| --- |\n| {cell} |\n",
        f"- {cell}\n",
        f"Agents: {cell}.\n",
        f"### {cell}\n",
    ]


@pytest.mark.parametrize("text", LIVE_MARKDOWN + AUTOLINKS)
def test_model_text_renders_as_text(text):
    renderer = MarkdownIt("commonmark").enable(["table", "strikethrough"])
    cell = markdown_cell(text)
    for document in contexts(cell):
        assert rendered(document, renderer) == [], document


@pytest.mark.parametrize("text", LIVE_MARKDOWN + AUTOLINKS)
def test_model_text_is_not_linkified(text):
    pytest.importorskip("linkify_it", reason="linkify-it-py is not installed")
    renderer = MarkdownIt("gfm-like")  # CommonMark, tables, strikethrough, linkify
    for document in contexts(markdown_cell(text)):
        assert rendered(document, renderer) == [], document


def test_the_text_itself_is_what_a_reader_sees():
    renderer = MarkdownIt("commonmark").enable("table")
    for text in LIVE_MARKDOWN + AUTOLINKS:
        html = renderer.render(f"| a |\n| --- |\n| {markdown_cell(text)} |\n")
        cell = re.search(r"<td>(.*)</td>", html).group(1)
        assert cell == markdown_it_text(" ".join(text.split()))


def markdown_it_text(text: str) -> str:
    """``text`` as HTML text (what markdown-it writes for a text node)."""
    return html.escape(text, quote=False).replace('"', "&quot;")


def test_numbers_and_plain_words_are_left_as_they_are():
    for text in ("-0.25", "+3.1", "51.0", "R 95% CI", "a/one", "E0 vs E1", "Done."):
        assert markdown_cell(text) == text
    assert markdown_cell("a|b\n<script>") == "a\\|b &lt;script&gt;"


FORMULAS = [
    '=HYPERLINK("http://evil.example/x","click")',
    "+1+1",
    "-2+3+cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "\t=1+1",
    "\r=1+1",
    "  =1+1",
    "'=1+1",
]


@pytest.mark.parametrize("text", FORMULAS)
def test_a_formula_cell_is_quoted(text):
    cell = spreadsheet_cell(text)
    assert cell == "'" + text and from_spreadsheet_cell(cell) == text


def test_numbers_stay_numbers_and_plain_text_stays():
    for value in (-0.25, -3, 0, 2.5, True, None, float("nan")):
        assert spreadsheet_cell(value) is value
    for text in ("plain", "3", "it's", "a=b", "E0"):
        assert spreadsheet_cell(text) == text
    written = csv_text([{"delta": -0.25, "name": "-0.25", "note": None}], ["delta", "name", "note"])
    assert written.splitlines() == ["delta,name,note", "-0.25,'-0.25,"]  # text is text


@given(st.text())
def test_every_text_comes_back_and_none_starts_a_formula(text):
    cell = spreadsheet_cell(text)
    assert from_spreadsheet_cell(cell) == text
    assert not re.match(r"[\s]*[=+\-@]|[\t\r]", cell)


def test_csv_text_quotes_header_and_cells_alike():
    text = csv_text([{"=h": "=1+1", "b": 2}], ["=h", "b"])
    assert list(csv.reader(io.StringIO(text))) == [["'=h", "b"], ["'=1+1", "2"]]
    with pytest.raises(ValueError):
        csv_text([{"other": 1}], ["b"])

"""Reference pages generated from the code, so that they cannot disagree with it.

Two directives:

- ``occubench-commands`` renders every command of the typer application (taken from
  ``occubench.cli``) with its help and each option as the terminal's ``--help`` shows it:
  names, value, help text, default. Typer (0.26 and later) builds its commands on a click
  of its own, which sphinx-click does not recognise, so the tree is walked here through
  the API both share (``list_commands``, ``get_command``, ``params``, ``get_help_record``).
- ``occubench-settings`` renders the fields of a pydantic model (``RunConfig``,
  ``EvalOptions``, ``ProtocolPoints``) from ``model_fields`` (``settings_rows``): name
  (with the older names it still accepts), type, default and description; with
  ``:presets:`` (a dict of preset name to model instance) one column per preset takes
  the place of the default.

And two link rules for the Markdown files at the repository's root, which GitHub shows as
they are: ``ARCHITECTURE.md`` and ``CONTRIBUTING.md`` are included into pages of the site,
so their links to each other (and to the README) are pointed at those pages; the README is
not part of the site, so its relative links are checked here (the file exists, and so does
the heading an anchor names), a broken one being a warning like any other.
"""

from __future__ import annotations

import importlib
import inspect
import re
import types
import typing
from enum import Enum
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import typer
from docutils import nodes
from docutils.parsers.rst import Parser, directives
from docutils.utils import new_document
from markdown_it import MarkdownIt
from myst_parser.slugs import github_slugify
from pydantic import BaseModel
from pydantic_core import PydanticUndefined
from sphinx.application import Sphinx
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

logger = logging.getLogger(__name__)

ROOT_PAGES = {
    "ARCHITECTURE.md": "docs/architecture.md",
    "CONTRIBUTING.md": "docs/contributing.md",
    "README.md": "docs/index.md",
}
"""The root's Markdown files and the site's page for each (the README's is the index)."""

_ROOT_LINK = re.compile(r"\]\((" + "|".join(re.escape(n) for n in ROOT_PAGES) + r")(#[^)\s]*)?\)")

_LITERAL = re.compile(r"``(.+?)``")
_SPECIAL = re.compile(r"([^A-Za-z0-9\s])")


def _escaped(text: str) -> str:
    """Reference text as literal reStructuredText: its ``code`` spans kept, other markup escaped."""
    parts = []
    last = 0
    for found in _LITERAL.finditer(text):
        parts.append(_SPECIAL.sub(r"\\\1", text[last : found.start()]))
        parts.append(found.group(0))
        last = found.end()
    parts.append(_SPECIAL.sub(r"\\\1", text[last:]))
    return "".join(parts)


def _paragraphs(text: str, indent: str = "") -> list[str]:
    """Help text as escaped lines, its paragraphs kept (click's no-rewrap markers dropped)."""
    lines = []
    for line in inspect.cleandoc(text).splitlines():
        if line.strip() == "\b":
            continue
        lines.append(indent + _escaped(line) if line.strip() else "")
    return lines


def _parsed(directive: SphinxDirective, lines: list[str]) -> list[nodes.Node]:
    """Generated reStructuredText as nodes, whatever the page's own markup (MyST or rST).

    It is parsed as a document of its own with the page's settings (Sphinx's environment
    among them, so ``program`` and ``option`` register their targets) and its reporter,
    so a problem in it is a warning of this page.
    """
    page = directive.state.document
    generated = new_document(page["source"], page.settings)
    generated.reporter = page.reporter
    Parser().parse("\n".join(lines) + "\n", generated)
    return list(generated.children)


def _imported(path: str) -> Any:
    """The object at ``module:attribute`` or ``module.attribute``."""
    module, _, name = path.rpartition(":") if ":" in path else path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def command_reference(app: Any, prog: str | None = None) -> list[str]:
    """Every command of a typer application as reStructuredText lines (``occubench-commands``).

    The options are read from the commands as typer builds them, so an option generated
    from a setting's field is in the reference without another edit.
    """
    root = typer.main.get_command(app)
    name = prog or root.name or "occubench"
    lines: list[str] = []
    _command(root, root.context_class(root, info_name=name), name, lines, depth=0)
    return lines


def _command(command: Any, ctx: Any, path: str, lines: list[str], depth: int) -> None:
    """Append one command's section (a heading, unless the root) and its subcommands'."""
    if depth:
        title = f"``{path}``"
        lines += [title, "-~^"[min(depth - 1, 2)] * len(title), ""]
    usage = " ".join([path, *command.collect_usage_pieces(ctx)])
    lines += [".. code-block:: text", "", f"   {usage}", ""]
    if command.help:
        lines += [*_paragraphs(command.help), ""]
    options = [p for p in command.params if not getattr(p, "hidden", False)]
    if options:
        lines += [f".. program:: {path}", ""]
    for param in options:
        # click gives an argument no help record; typer gives it one
        names, help_text = param.get_help_record(ctx) or (param.human_readable_name, "")
        lines += [f".. option:: {names}", ""]
        if help_text:
            lines += [*_paragraphs(help_text, indent="   "), ""]
    if hasattr(command, "list_commands"):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or getattr(sub, "hidden", False):
                continue
            sub_ctx = sub.context_class(sub, info_name=name, parent=ctx)
            _command(sub, sub_ctx, f"{path} {name}", lines, depth + 1)


class CommandsDirective(SphinxDirective):
    """Every command of a typer application, with its options, as sections."""

    required_arguments = 1
    option_spec = {"prog": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        """Render the command tree of the application named by the argument."""
        lines = command_reference(_imported(self.arguments[0]), self.options.get("prog"))
        return _parsed(self, lines)


def _type_text(annotation: Any) -> str:
    """A field's type in words: enums by their values, optional ones with "or None"."""
    if annotation is type(None):
        return "None"
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return " | ".join(str(member.value) for member in annotation)
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type_text(arg) for arg in args)
    if origin is typing.Literal:
        return " | ".join(repr(arg) for arg in args)
    if origin is list:
        return f"list of {_type_text(args[0])}" if args else "list"
    if origin is dict:
        return "JSON object"
    return getattr(annotation, "__name__", str(annotation))


def _bounds(metadata: list[Any]) -> str:
    """The field's numeric bounds (``ge``, ``gt``, ``le``, ``lt``) in words."""
    said = []
    for item in metadata:
        for attribute, sign in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
            if getattr(item, attribute, None) is not None:
                said.append(f"{sign} {getattr(item, attribute)}")
    return ", ".join(said)


def _value_text(value: Any) -> str:
    """A default or preset value as it is written in a sweep file or on the command line."""
    if isinstance(value, Enum):
        return str(value.value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "None"
    if isinstance(value, list | dict) and not value:
        return "[]" if isinstance(value, list) else "{}"
    return str(value)


def _names(name: str, field: Any) -> str:
    """A setting's name, and the older names it still accepts (its validation aliases)."""
    alias = field.validation_alias
    choices = getattr(alias, "choices", [alias] if alias else [])
    older = [c for c in choices if isinstance(c, str) and c != name]
    return f"``{name}``" + "".join(f" (also ``{o}``)" for o in older)


def settings_rows(
    model: type[BaseModel], presets: dict[Any, BaseModel] | None = None
) -> list[list[str]]:
    """A model's settings table as reStructuredText cells: its header row, then one per field.

    Every field shows, with nothing but the model to read: a field added to the model is a
    row of the reference without another edit.
    """
    presets = presets or {}
    columns = ["setting", "type"]
    columns += [f"``{_value_text(name)}``" for name in presets] or ["default"]
    columns.append("description")
    rows = [columns]
    for name, field in model.model_fields.items():
        kind = _type_text(field.annotation)
        bounds = _bounds(field.metadata)
        row = [_names(name, field), _escaped(kind + (f" ({bounds})" if bounds else ""))]
        if presets:
            row += [_escaped(_value_text(getattr(p, name))) for p in presets.values()]
        elif field.default is not PydanticUndefined:
            row.append(_escaped(_value_text(field.default)))
        elif field.default_factory is not None:
            row.append(_escaped(_value_text(field.default_factory())))
        else:
            row.append("required")
        row.append(_escaped(field.description or ""))
        rows.append(row)
    return rows


class SettingsDirective(SphinxDirective):
    """The fields of a pydantic model as a table: name, type, default, description."""

    required_arguments = 1
    option_spec = {"presets": directives.unchanged_required}

    def run(self) -> list[nodes.Node]:
        """Render the table of the model named by the argument."""
        model = _imported(self.arguments[0])
        if not (isinstance(model, type) and issubclass(model, BaseModel)):
            raise self.error(f"{self.arguments[0]} is not a pydantic model")
        presets: dict[Any, BaseModel] = {}
        if "presets" in self.options:
            presets = _imported(self.options["presets"])
        lines = [".. list-table::", "   :header-rows: 1", ""]
        for row in settings_rows(model, presets):
            lines.append(f"   * - {row[0]}")
            lines += [f"     - {cell}" for cell in row[1:]]
        return _parsed(self, lines)


def _root_links(app: Sphinx, path: Path, docname: str, content: list[str]) -> None:
    """In a root file included into a page, point links to the other root files at their pages.

    The include's ``relative-docs`` option then makes every ``docs/...`` link relative to
    the including page.
    """
    if Path(path).parent != Path(".."):
        return
    content[0] = _ROOT_LINK.sub(
        lambda found: f"]({ROOT_PAGES[found.group(1)]}{found.group(2) or ''})", content[0]
    )


def _slugs(markdown: str) -> set[str]:
    """The anchors of a Markdown file's headings, as GitHub and MyST make them."""
    tokens = MarkdownIt("commonmark").parse(markdown)
    found: set[str] = set()
    for opening, inline in zip(tokens, tokens[1:], strict=False):
        if opening.type != "heading_open" or inline.children is None:
            continue
        title = "".join(c.content for c in inline.children if c.type in ("text", "code_inline"))
        slug = base = github_slugify(title)
        count = 0
        while slug in found:
            count += 1
            slug = f"{base}-{count}"
        found.add(slug)
    return found


def _check_front_page(app: Sphinx) -> None:
    """Warn about each relative link of the README whose file or heading does not exist."""
    root = Path(app.srcdir).parent
    readme = root / "README.md"
    if not readme.is_file():
        return
    tokens = MarkdownIt("commonmark").parse(readme.read_text(encoding="utf-8"))
    for block in tokens:
        for child in block.children or []:
            href = str(child.attrs.get("href", "")) if child.type == "link_open" else ""
            parts = urlsplit(href)
            if not href or parts.scheme or parts.netloc:
                continue  # external links are not checked (no network in CI)
            line = (block.map[0] + 1) if block.map else 0
            target = (root / unquote(parts.path)) if parts.path else readme
            if not target.exists():
                logger.warning(
                    "README.md links to a missing file: %s", href, location=f"{readme}:{line}"
                )
            elif parts.fragment and target.suffix == ".md":
                if parts.fragment not in _slugs(target.read_text(encoding="utf-8")):
                    logger.warning(
                        "README.md links to a missing heading: %s",
                        href,
                        location=f"{readme}:{line}",
                    )


def setup(app: Sphinx) -> dict[str, Any]:
    """Register the two directives and the link rules of the root's Markdown files."""
    app.add_directive("occubench-commands", CommandsDirective)
    app.add_directive("occubench-settings", SettingsDirective)
    app.connect("include-read", _root_links)
    app.connect("builder-inited", _check_front_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}

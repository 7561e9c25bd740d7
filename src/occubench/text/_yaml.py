"""YAML read within bounds: a file's size, its node count and nesting depth, checked first.

A YAML file is input from anyone: a few kilobytes of aliases (``&a [*b, *b, ...]``,
each level ten times the last) stand for billions of values, and a deep nesting
exhausts the stack. ``bounded_yaml`` refuses both while the document is composed, before
a Python object is built: every node counts, an alias as many nodes as the node it
names (so a sweep may still use anchors, within the bound), and a node nested deeper
than the bound stops the read. An alias to a node that contains it (a cycle) is refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from occubench.errors import UsageError


class YamlBoundError(UsageError):
    """A YAML document over a bound, or not YAML; the message names the file and line."""


_SHOWN_STEPS = 6
"""Steps of a field's path a message shows (a deep one ends in ``...``)."""


def _key(index: Any) -> str | int | None:
    """The path step of a node composed at ``index`` (a mapping key, a list position)."""
    if isinstance(index, yaml.ScalarNode):
        return str(index.value)
    return index if isinstance(index, int) else None


class _BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no types
    """The safe loader, counting nodes (aliases at their expanded size) and depth."""

    def __init__(self, text: str, *, max_nodes: int, max_depth: int) -> None:
        super().__init__(text)
        self.max_nodes = max_nodes
        self.max_depth = max_depth
        self.nodes = 0
        self.depth = 0
        self.path: list[str | int] = []
        """Mapping keys and list positions down to the node being composed (messages)."""
        self.sizes: dict[int, int] = {}
        """Anchored nodes composed so far (by id) -> the nodes each stands for."""

    def field(self) -> str:
        """Where the composer is: ``agents[2].generate`` (empty at the top level)."""
        out = ""
        for step in self.path[:_SHOWN_STEPS]:
            out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
        return out + ("..." if len(self.path) > _SHOWN_STEPS else "")

    def fail(self, event: Any, problem: str) -> YamlBoundError:
        field = self.field()
        where = f"line {event.start_mark.line + 1}" + (f" ({field})" if field else "")
        return YamlBoundError(f"{where}: {problem}")

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        step = _key(index)
        if step is not None:
            self.path.append(step)
        try:
            if isinstance(event, yaml.AliasEvent):
                named = self.anchors.get(event.anchor)
                if named is not None and id(named) not in self.sizes:
                    raise self.fail(event, f"alias *{event.anchor} refers to a node holding it")
                self.count(self.sizes.get(id(named), 1), event)
                return super().compose_node(parent, index)
            if self.depth >= self.max_depth:  # keys count: {{{a: 1}: 1}: 1} nests too
                raise self.fail(event, f"nested deeper than {self.max_depth} levels")
            before = self.nodes
            self.count(1, event)
            self.depth += 1
            node = super().compose_node(parent, index)
            self.depth -= 1
            if event.anchor is not None:
                self.sizes[id(node)] = self.nodes - before
            return node
        finally:
            if step is not None:
                self.path.pop()

    def count(self, nodes: int, event: Any) -> None:
        self.nodes += nodes
        if self.nodes > self.max_nodes:
            raise self.fail(
                event,
                f"more than {self.max_nodes} YAML values (an alias counts as the values "
                "it repeats)",
            )


def bounded_yaml(
    source: Path | bytes, where: str, *, max_bytes: int, max_nodes: int, max_depth: int
) -> Any:
    """One YAML document as Python values, within the bounds.

    Args:
        source: The file (no more than ``max_bytes + 1`` bytes of it are read), or the
            document's bytes.
        where: How messages name the document (a path, ``shipped sweep demo``).
        max_bytes: Largest document, in bytes.
        max_nodes: Most values (scalars, lists, mappings; an alias counts as the values
            of the node it names).
        max_depth: Deepest nesting of lists and mappings.

    Raises:
        YamlBoundError: unreadable, over a bound, not UTF-8, or not valid YAML (file,
            line, field).
    """
    if isinstance(source, Path):
        try:
            with source.open("rb") as handle:
                text = handle.read(max_bytes + 1)
        except OSError as e:
            raise YamlBoundError(f"{where}: cannot be read: {e.strerror or e}") from None
    else:
        text = source
    if len(text) > max_bytes:
        raise YamlBoundError(f"{where}: larger than {max_bytes} bytes")
    try:
        decoded = text.decode("utf-8")
    except UnicodeDecodeError as e:
        raise YamlBoundError(f"{where}: not UTF-8 text (byte {e.start})") from None
    loader = None
    try:
        loader = _BoundedLoader(decoded, max_nodes=max_nodes, max_depth=max_depth)
        return loader.get_single_data()
    except YamlBoundError as e:
        raise YamlBoundError(f"{where}, {e}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        at = f", line {mark.line + 1}" if mark is not None else ""
        raise YamlBoundError(f"{where}{at}: not valid YAML: {e.problem or e.context}") from None
    except yaml.reader.ReaderError as e:  # checked before parsing: a control character
        line = decoded.count("\n", 0, e.position) + 1
        problem = f"character #x{e.character:04x} is not allowed"
        raise YamlBoundError(f"{where}, line {line}: not valid YAML: {problem}") from None
    finally:
        if loader is not None:
            loader.dispose()

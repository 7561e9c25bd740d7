"""The package keeps the layout ARCHITECTURE.md declares (its "Base modules" and "Rooms" tables)."""

import ast
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "occubench"
ARCHITECTURE = ROOT / "ARCHITECTURE.md"
EVERYTHING = "everything"
COMMAND_ROOMS = {"_registry", "cli"}
"""The only rooms that may import ``task`` (the runner names tasks by registry name)."""


def table(markdown: str, heading: str) -> dict[str, set[str] | None]:
    """The rows of the table under ``## heading``: name -> rooms it may import (None: all)."""
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", markdown, re.M | re.S)
    assert section, f"ARCHITECTURE.md has no section '## {heading}'"
    rows: dict[str, set[str] | None] = {}
    for line in section.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or not cells[0].startswith("`"):
            continue  # prose, the header or its rule
        name = cells[0].strip("`")
        allowed = cells[2]
        rows[name] = None if allowed == EVERYTHING else set(re.findall(r"`([\w.]+)`", allowed))
    assert rows, f"the section '## {heading}' of ARCHITECTURE.md has no table rows"
    return rows


def layout(markdown: str) -> tuple[dict[str, set[str] | None], dict[str, set[str] | None]]:
    """The base modules and the rooms, each with what it may import."""
    return table(markdown, "Base modules"), table(markdown, "Rooms")


def room_of(path: Path, package: Path) -> str:
    """The room a file belongs to: its first folder or module name under the package."""
    return path.relative_to(package).parts[0].removesuffix(".py")


def imports(path: Path) -> list[tuple[int, str]]:
    """Every occubench module a file imports: (line, dotted module or imported name)."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if node.module == "occubench":  # from occubench import room
                found += [(node.lineno, f"occubench.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return [(line, name) for line, name in found if name.startswith("occubench.")]


def layout_problems(package: Path, markdown: str) -> list[str]:
    """Every way the package's imports differ from the layout (empty: none)."""
    base, rooms = layout(markdown)
    problems = []
    for name in sorted(set(base) | set(rooms)):
        if not (package / name).is_dir() and not (package / f"{name}.py").is_file():
            problems.append(f"ARCHITECTURE.md names {name}, which the package does not have")
    for path in sorted(package.rglob("*.py")):
        where = path.relative_to(package)
        if where == Path("__init__.py"):
            continue  # the package itself: its version, nothing imported
        room = room_of(path, package)
        if room not in base and room not in rooms:
            problems.append(f"{where}: room {room} is in neither table of ARCHITECTURE.md")
            continue
        allowed = base[room] if room in base else rooms[room]
        for line, module in imports(path):
            parts = module.split(".")
            other = parts[1]
            private = [p for p in parts[2:] if p.startswith("_")]
            if other != room and private:
                problems.append(f"{where}:{line} imports {module}, private to room {other}")
            if other == "task" and room not in COMMAND_ROOMS:
                problems.append(f"{where}:{line} imports occubench.task (only the command may)")
            if allowed is None or other == room or other in allowed:
                continue
            if room not in base and other in base:
                continue
            problems.append(f"{where}:{line} imports occubench.{other}, which {room} may not")
    return problems


def test_every_import_follows_the_layout():
    problems = layout_problems(PACKAGE, ARCHITECTURE.read_text())
    assert not problems, "imports ARCHITECTURE.md does not allow:\n" + "\n".join(problems)


def module_name(path: Path, package: Path) -> str:
    """A file's dotted module name (a package's ``__init__`` is the package)."""
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_circle(package: Path) -> list[str] | None:
    """One circle of imports between the package's modules, or None when there is none.

    Every import counts, those under ``TYPE_CHECKING`` and inside functions too: a circle a
    type checker follows is a circle. A package re-exporting its own modules from its
    ``__init__`` is not one (the modules import the package's siblings, never it back).
    """
    files = {module_name(path, package): path for path in package.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        targets = set()
        for _, imported in imports(path):
            while imported and imported not in files:
                imported = imported.rpartition(".")[0]  # a name imported from a module
            if imported and imported != name and not imported.startswith(f"{name}."):
                targets.add(imported)
        graph[name] = targets
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as found:
        return list(found.args[1])
    return None


def test_no_module_imports_itself_back():
    circle = import_circle(PACKAGE)
    assert circle is None, "an import circle: " + " -> ".join(circle or [])


@pytest.fixture
def package(tmp_path):
    """A small package laid out as ARCHITECTURE.md says, to plant bad imports in."""
    root = tmp_path / "occubench"
    for name, text in {
        "__init__.py": "",
        "defaults.py": "",
        "text/__init__.py": "",
        "text/_cells.py": "",
        "calls/__init__.py": "from occubench.calls._ask import ask\n",
        "calls/_ask.py": "from occubench.text import clean\nfrom occubench.defaults import A\n",
        "cli/__init__.py": "from occubench.task import occubench\n",
        "scale/__init__.py": "",
        "task.py": "",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


MINI = """# Architecture

## Base modules

| module | holds | may import |
|---|---|---|
| `defaults` | every DEFAULT_* | — |

## Rooms

| room | holds | may import |
|---|---|---|
| `text` | text | — |
| `calls` | one model call | `text` |
| `scale` | a room the table lets import task | `task` |
| `task` | the @tasks | `calls` |
| `cli` | the command | everything |
"""


def test_a_layout_that_holds_has_no_problems(package):
    assert layout_problems(package, MINI) == []


@pytest.mark.parametrize(
    ("file", "text", "problem"),
    [
        ("text/_cells.py", "from occubench.calls import ask\n", "which text may not"),
        ("text/_cells.py", "from occubench import calls\n", "which text may not"),
        (
            "calls/_ask.py",
            "import occubench.calls._ask\nfrom occubench.text._cells import x\n",
            "private to room text",
        ),
        ("scale/__init__.py", "from occubench.task import occubench\n", "only the command may"),
        ("defaults.py", "from occubench.text import clean\n", "which defaults may not"),
        ("stray.py", "", "room stray is in neither table"),
    ],
)
def test_a_planted_import_is_found(package, file, text, problem):
    (package / file).write_text(text)
    problems = layout_problems(package, MINI)
    assert len(problems) == 1 and problem in problems[0], problems


def test_a_layout_that_holds_has_no_circle(package):
    assert import_circle(package) is None


def test_a_planted_circle_is_found_even_behind_type_checking(package):
    (package / "calls/_ask.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from occubench.calls._back import b\n"
    )
    (package / "calls/_back.py").write_text("from occubench.calls._ask import ask\n")
    circle = import_circle(package)
    assert circle is not None
    assert {"occubench.calls._ask", "occubench.calls._back"} == set(circle)


def test_a_room_the_package_lacks_is_found(package):
    problems = layout_problems(package, MINI + "| `gone` | nothing | — |\n")
    assert problems == ["ARCHITECTURE.md names gone, which the package does not have"]


def test_the_layout_is_read_from_both_tables():
    base, rooms = layout(ARCHITECTURE.read_text())
    assert {
        "defaults",
        "roles",
        "protocols",
        "errors",
        "redaction",
        "archives",
        "lazy",
        "records",
        "files",
    } == set(base)
    assert {"text", "calls", "results", "costs", "analysis", "report", "cli"} <= set(rooms)
    assert rooms["cli"] is None and rooms["text"] == set()
    assert rooms["task"] is not None and "costs" in rooms["task"]

"""The docs' commands as tests: every block of the README and docs/ runs as written, in order.

Each fenced block names its language. ``sh`` blocks run in bash, ``console`` blocks run
their ``$ `` lines, ``python`` blocks run in Python (top-level ``await`` allowed, as in a
notebook); ``text``, ``json``, ``yaml`` and ``toml`` blocks and MyST directives are not
commands. A block that cannot run here (it needs a key, the network, a person, or is too
slow) says so just before it, with its reason: ``<!-- docs-walk: skip (REASON) -->``. A
block whose command is meant to fail says its exit status: ``<!-- docs-walk: exit N -->``.

Shown output is checked against what ran: a block after ``<!-- docs-walk: output -->``
must appear, line for line, in the output of the page's last block that ran; a Markdown
table after ``<!-- docs-walk: figures -->`` must have each row's figures, in order, on
one line of the page's output so far. No command prints Inspect's startup banner.

The parse and the markers are checked by the default suite (``test_every_block_*``); the
pages run under the ``docs`` marker (``python -m pytest -m docs tests/test_docs.py``,
which ``.ci/run`` runs): each page in a temporary folder of its own, with no API key in
its environment, the ``occubench`` of this interpreter on its PATH, and 200 columns for
the tables. The folder holds a link to the checkout's ``docs/`` for the pages that name
its files (the agent recipes).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from conftest import HANG_BOUND

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
RUN = {"sh", "console", "python"}
"""The languages of blocks that are commands."""
SHOWN = {"text", "json", "yaml", "toml"}
"""The languages of blocks that are not commands (output, files)."""
COLUMNS = 200
"""The walk's terminal width: the shown tables were printed on a wide terminal."""
KEYS = ("API_KEY", "AUTH_TOKEN", "_BASE_URL", "OCCUBENCH_SERVE_TOKEN")
"""What names a credential or an endpoint in the environment: none reaches a page."""

BANNER = "hooks enabled"
"""Inspect's startup banner, which occubench's commands and library calls do not print."""

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})(.*)$")
_MARKER = re.compile(
    r"^<!-- docs-walk: (skip \((?P<reason>.+)\)|exit (?P<exit>\d+)|output|figures) -->$"
)
_FIGURE = re.compile(r"(?<![\w.,])\d[\d,]*(?:\.\d+)?(?![\w])")

NOTEBOOK = """
import ast, asyncio, sys
path = sys.argv[1]
code = compile(open(path).read(), path, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
result = eval(code, {"__name__": "__main__"})
if asyncio.iscoroutine(result):
    asyncio.run(result)
"""
"""Runs a Python block as a notebook cell would: top-level ``await`` allowed."""


@dataclass
class Block:
    """One fenced block of a page, or a table marked for its figures."""

    page: Path
    line: int
    lang: str
    text: str
    marker: str = ""
    reason: str = ""
    exit: int = 0

    @property
    def where(self) -> str:
        page = self.page.relative_to(ROOT) if self.page.is_relative_to(ROOT) else self.page
        return f"{page}:{self.line}"


@dataclass
class Walked:
    """What a page's blocks printed so far."""

    last: str = ""
    every: list[str] = field(default_factory=list)
    groups: list[int] = field(default_factory=list)


def blocks(page: Path) -> list[Block]:
    """The page's fenced blocks and figures tables, in order, each with its marker."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    marker: re.Match[str] | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == fence[1])
            block = Block(page, i + 1, fence[2].strip(), "\n".join(lines[i + 1 : end]) + "\n")
            found.append(_marked(block, marker))
            marker, i = None, end + 1
            continue
        if line.startswith("|") and marker is not None:
            rows = (j for j in range(i, len(lines)) if not lines[j].startswith("|"))
            end = next(rows, len(lines))
            found.append(_marked(Block(page, i + 1, "table", "\n".join(lines[i:end])), marker))
            marker, i = None, end
            continue
        if line.strip():
            marker = _MARKER.match(line.strip())
        i += 1
    return found


def _marked(block: Block, marker: re.Match[str] | None) -> Block:
    if marker is not None:
        block.marker = marker[1].split(" ")[0]
        block.reason = marker["reason"] or ""
        block.exit = int(marker["exit"] or 0)
    return block


def problems(block: Block) -> list[str]:
    """What is wrong with a block's language and marker (empty: nothing)."""
    if block.lang.startswith("{"):  # a MyST directive (toctree, include, literalinclude)
        return [f"{block.where}: a directive takes no marker"] if block.marker else []
    if block.lang == "table":
        return [] if block.marker == "figures" else [f"{block.where}: only figures mark a table"]
    if block.lang not in RUN | SHOWN:
        return [f"{block.where}: give the block a language ({', '.join(sorted(RUN | SHOWN))})"]
    if block.lang in SHOWN and block.marker not in ("", "output"):
        return [f"{block.where}: a {block.lang} block is not run: no {block.marker} marker"]
    if block.lang in RUN and block.marker in ("output", "figures"):
        return [f"{block.where}: {block.marker} marks shown output, not a command"]
    return []


def console_commands(text: str) -> str:
    """The ``$ `` lines of a console block (with their continuation lines), as a script."""
    commands: list[str] = []
    going_on = False
    for line in text.splitlines():
        if line.startswith("$ ") or going_on:
            commands.append(line.removeprefix("$ "))
            going_on = line.endswith("\\")
    return "\n".join(commands) + "\n"


def page_environment(folder: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not any(key in k for key in KEYS)}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["COLUMNS"] = str(COLUMNS)
    env["HOME"] = str(folder / "home")  # caches and per-user files in the page's folder
    env.pop("OCCUBENCH_DATASET", None)
    return env


def run_block(block: Block, folder: Path, walked: Walked) -> None:
    """Run one command block in the page's folder; its output is kept for the checks."""
    script = folder / ".walk" / f"{block.line}.{'py' if block.lang == 'python' else 'sh'}"
    state = folder / ".walk" / "state.sh"  # what the page's earlier blocks exported
    body = console_commands(block.text) if block.lang == "console" else block.text
    script.write_text(body, encoding="utf-8")
    run = f'python "{folder / ".walk" / "notebook.py"}" "{script}"'
    if block.lang != "python":
        run = f'set -e -o pipefail\n. "{script}"'
    wrapper = f'. "{state}"\ntrap \'export -p > "{state}"\' EXIT\n{run}\n'
    process = subprocess.Popen(
        ["bash", "-c", wrapper],
        cwd=folder,
        env=page_environment(folder),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # its background servers end with the page
    )
    walked.groups.append(process.pid)
    output, _ = process.communicate(timeout=HANG_BOUND)
    assert process.returncode == block.exit, f"{block.where} exited {process.returncode}:\n{output}"
    assert BANNER not in output, f"{block.where}: Inspect's banner on occubench's output"
    walked.last = output
    walked.every.append(output)


def check_output(block: Block, walked: Walked) -> None:
    """Every line of a shown output block is a line the page's last command printed."""
    printed = {line.rstrip() for line in walked.last.splitlines()}
    missing = [s for s in block.text.splitlines() if s.strip() and s.rstrip() not in printed]
    assert not missing, f"{block.where}: shown but not printed:\n" + "\n".join(missing)


def figures(text: str) -> list[str]:
    return [f.replace(",", "") for f in _FIGURE.findall(text)]


def check_figures(block: Block, walked: Walked) -> None:
    """Each row's figures, in order, are the figures of one line the page printed."""
    printed = {tuple(figures(line)) for out in walked.every for line in out.splitlines()}
    rows = [row for row in block.text.splitlines()[2:] if figures(row)]
    differ = [row for row in rows if tuple(figures(row)) not in printed]
    assert rows and not differ, f"{block.where}: figures that did not print:\n" + "\n".join(differ)


def walk(page: Path, folder: Path) -> list[str]:
    """Run the page's blocks in order in ``folder``; the lines of what was skipped, why."""
    (folder / ".walk").mkdir()
    (folder / "home").mkdir()
    (folder / ".walk" / "state.sh").write_text("")
    (folder / ".walk" / "notebook.py").write_text(NOTEBOOK)
    (folder / "docs").symlink_to(ROOT / "docs")
    walked, skipped = Walked(), []
    try:
        for block in blocks(page):
            if block.marker == "skip":
                skipped.append(f"{block.where}: {block.reason}")
            elif block.marker == "output":
                check_output(block, walked)
            elif block.marker == "figures":
                check_figures(block, walked)
            elif block.lang in RUN:
                run_block(block, folder, walked)
    finally:
        for group in walked.groups:
            try:
                os.killpg(group, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return skipped


def test_every_block_names_its_language_and_its_markers_fit():
    found = [problem for page in PAGES for block in blocks(page) for problem in problems(block)]
    assert not found, "\n".join(found)


def test_every_skip_gives_its_reason_and_every_page_marker_is_read():
    for page in PAGES:
        said = sum("docs-walk:" in line for line in page.read_text().splitlines())
        assert said == sum(bool(b.marker) for b in blocks(page)), page  # none misplaced
        assert all(b.reason for b in blocks(page) if b.marker == "skip"), page


def test_the_checks_fail_on_drift(tmp_path):
    page = tmp_path / "page.md"
    shown = "<!-- docs-walk: output -->\n```text\n| 1.00 |\n```\n"
    table = "<!-- docs-walk: figures -->\n| a | b |\n|---|---|\n| E0 run | 24,285 |\n"
    page.write_text(f"```sh\necho '| 1.00 |'\n```\n{shown}{table}")
    walked = Walked(last="| 1.00 |\n", every=["| E0 run | 24,985 |\n"])
    found = blocks(page)
    check_output(found[1], walked)
    with pytest.raises(AssertionError, match="24,285"):
        check_figures(found[2], walked)
    with pytest.raises(AssertionError, match=r"\| 1\.00 \|"):
        check_output(found[1], Walked(last="| 0.99 |\n"))
    assert console_commands("$ a \\\n  b\nout\n$ c\n") == "a \\\n  b\nc\n"


@pytest.mark.docs
@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_the_page_runs_as_written(page, tmp_path):
    skipped = walk(page, tmp_path)
    if skipped:
        print("\n".join(["", f"{page.relative_to(ROOT)}: skipped", *skipped]))

"""The shape of the package, measured: what a layout change claims, printed from the tree.

Not a speed measurement: the figures a refactor of the house is judged by, read from
`src/occubench` as it stands, so that a before and an after come from the same code.

- lines per room (a room is a subpackage or a top-level module);
- functions longer than 80 lines (where they are, per room);
- `dict[str, Any]` written in the package's source;
- the import circles between modules (every import counted, those under
  `TYPE_CHECKING` and inside functions too: a circle a type checker sees is a circle).

Run: `python benchmarks/house.py [--src src/occubench] [--long 80]`.
"""

from __future__ import annotations

import argparse
import ast
import re
from collections import Counter, defaultdict
from pathlib import Path

_DICT_ANY = re.compile(r"dict\[str,\s*Any\]")


def _module_name(src: Path, path: Path) -> str:
    parts = list(path.relative_to(src.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _room(src: Path, path: Path) -> str:
    rel = path.relative_to(src)
    return rel.parts[0].removesuffix(".py")


def _imports(tree: ast.AST, module: str, is_package: bool) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base]) if base else ".".join(anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).parents[1] / "src" / "occubench")
    parser.add_argument("--long", type=int, default=80, help="a function longer than this is long")
    args = parser.parse_args()
    src: Path = args.src.resolve()

    lines: Counter[str] = Counter()
    long_functions: list[tuple[int, str]] = []
    dict_any = 0
    dict_any_files = 0
    modules: dict[str, tuple[Path, ast.AST]] = {}
    for path in sorted(src.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        room = _room(src, path)
        lines[room] += text.count("\n")
        hits = len(_DICT_ANY.findall(text))
        dict_any += hits
        dict_any_files += bool(hits)
        tree = ast.parse(text)
        modules[_module_name(src, path)] = (path, tree)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > args.long:
                    where = f"{path.relative_to(src.parent)}:{node.lineno} {node.name}"
                    long_functions.append((length, where))

    graph: dict[str, set[str]] = defaultdict(set)
    for name, (path, parsed) in modules.items():
        graph.setdefault(name, set())
        for target in _imports(parsed, name, path.name == "__init__.py"):
            # `from occubench.x import y` names a module where y is one, else the package
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                graph[name].add(target)
    # a package's __init__ re-exporting its own modules is not a circle of design
    for name in list(graph):
        graph[name] = {t for t in graph[name] if not t.startswith(name + ".")}
    circles = _circles(dict(graph))

    print(f"rooms: {len(lines)}, lines: {sum(lines.values())}")
    for room, count in lines.most_common():
        print(f"  {room:<14} {count:>6}")
    print(f"functions over {args.long} lines: {len(long_functions)}")
    by_room = Counter(
        where.split("/")[1].removesuffix(".py").split(":")[0] for _, where in long_functions
    )
    print("  per room: " + ", ".join(f"{room} {n}" for room, n in by_room.most_common()))
    for length, where in sorted(long_functions, reverse=True):
        print(f"  {length:>4}  {where}")
    print(f"dict[str, Any]: {dict_any} in {dict_any_files} files")
    print(f"import circles: {len(circles)}")
    for circle in circles:
        print("  " + " <-> ".join(circle))


if __name__ == "__main__":
    main()

"""The rooms of the package import only what the README's Layout says they may."""

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "occubench"

BASE = {
    "defaults",
    "roles",
    "errors",
    "codepoints",
    "asking",
    "interpreter",
    "protocols",
    "budget",
    "tokens",
    "redaction",
    "calls",
}
"""Small modules every room may import (they import nothing above them)."""

ALLOWED = {
    "defaults": set(),
    "roles": set(),
    "protocols": set(),
    "errors": set(),
    "codepoints": set(),
    "asking": {"codepoints"},
    "interpreter": {"defaults"},
    "budget": {"calls", "errors", "tokens"},
    "tokens": {"defaults"},
    "redaction": set(),
    "calls": set(),
    "dataset": set(),
    "simchecks": {"dataset"},
    "simulator": {"dataset", "simchecks"},
    "faults": {"dataset", "simulator"},
    "config": {"dataset", "simulator", "faults"},
    "agent": {"config", "dataset", "simchecks", "simulator", "faults"},
    "grading": {"agent", "dataset"},
    "analysis": {"agent", "config", "dataset", "faults", "grading", "simchecks", "simulator"},
    "scale": {"analysis", "config", "dataset"},
    "fidelity": {"analysis", "config", "dataset", "grading", "scale", "simchecks", "simulator"},
    "diagnosis": {"agent", "analysis", "config", "grading", "scale"},
    "synthesis": {"analysis", "config", "dataset", "grading", "scale", "simulator"},
    "scripted": {"agent", "dataset", "faults", "simulator"},
    "review": {"analysis"},
    "providers": set(),
    "env": {"agent", "config", "dataset", "grading"},
    "serving": {"agent", "analysis", "config", "env", "grading"},
    "export": {"agent", "analysis", "dataset"},
    "task": {"agent", "config", "dataset", "fidelity", "grading", "serving", "simulator"},
    "_registry": {"task", "scripted", "diagnosis", "providers"},
    "shard_worker": {"scale"},
    "__main__": {"cli"},
    "__init__": set(),
    "cli": None,  # the command: everything
}


def imported_rooms(path: Path) -> set[str]:
    """The occubench rooms a module imports (``occubench.X...`` -> ``X``)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        found |= {n.split(".")[1] for n in names if n.startswith("occubench.")}
    return found


def test_every_room_imports_only_what_it_may():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        room = path.relative_to(PACKAGE).parts[0].removesuffix(".py")
        assert room in ALLOWED, f"{room} is not in the layout (README 'Layout' and ALLOWED)"
        allowed = ALLOWED[room]
        if allowed is None:
            continue
        extra = imported_rooms(path) - allowed - BASE - {room}
        if room in BASE:
            extra = imported_rooms(path) - allowed - {room}
        wrong += [f"{path.relative_to(PACKAGE)} imports occubench.{x}" for x in sorted(extra)]
    assert not wrong, "imports the layout does not allow:\n" + "\n".join(wrong)


def test_nothing_below_the_command_imports_the_task_module():
    users = [
        str(p.relative_to(PACKAGE))
        for p in PACKAGE.rglob("*.py")
        if "task" in imported_rooms(p) and p.relative_to(PACKAGE).parts[0] not in ("cli",)
    ]
    assert users == ["_registry.py"]

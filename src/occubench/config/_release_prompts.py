"""The release's own prompt wording, read from a local clone of the public repository.

occubench ships only its own paraphrases of the release's prompts (they follow the
release's content points). A user with a clone of the public OccuBench repository can
have a run use the release's exact words (``prompts_from=DIR``): the constants are read
from its source files with ``ast`` (the files are never imported or run), each template's
placeholders are checked, and the files' SHA-256 go into the log.

Read from ``DIR/occubench/``: ``agent.py`` (``EXECUTOR_SYSTEM_PROMPT``: a scenario and a
time placeholder), ``verifier.py`` (``VERIFIER_PROMPT``: the six sections),
``fault_injection.py`` (``FAULT_PROMPT_E1``/``_E2``/``_E3``: a count and a duration
placeholder) and ``lwm.py`` (the output-format strings of ``simulate_tool_call``).
"""

from __future__ import annotations

import ast
import hashlib
import string
from pathlib import Path

from pydantic import BaseModel, Field

from occubench.faults import EnvMode, FaultRules

PACKAGE = "occubench"
"""The release's package folder inside a clone."""

FORMAT_HEADING = "### OUTPUT FORMAT INSTRUCTIONS"

VERIFIER_FIELDS = frozenset(
    {
        "task_scenario_name",
        "task_initial_state",
        "state_description",
        "agent_instruction",
        "verification_plan",
        "trajectory",
    }
)
"""The placeholders of the verifier prompt (the release's and our paraphrase's)."""


class PromptsError(ValueError):
    """The clone lacks a constant, or a constant's placeholders are not the expected ones."""


def placeholders(template: str) -> list[str]:
    """The field names of a ``str.format`` template, in order."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def renamed(template: str, names: dict[str, str]) -> str:
    """The template with its placeholders renamed (literal braces kept doubled)."""
    out = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            out.append(
                "{"
                + names.get(name, name)
                + (f"!{conversion}" if conversion else "")
                + (f":{spec}" if spec else "")
                + "}"
            )
    return "".join(out)


def _constants(path: Path) -> dict[str, str]:
    """Module-level string constants of a Python source file (parsed, never run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as e:
        raise PromptsError(f"{path}: cannot be read as Python source: {e}") from None
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            if isinstance(node.value.value, str):
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = node.value.value
    return found


def _constant(path: Path, name: str) -> str:
    found = _constants(path).get(name)
    if found is None:
        raise PromptsError(f"{path}: no string constant {name}")
    return found


def _roles(
    path: Path, name: str, template: str, roles: dict[str, tuple[str, ...]]
) -> dict[str, str]:
    """Map each placeholder of ``template`` to our role name by the words its name holds."""
    fields = list(dict.fromkeys(placeholders(template)))
    mapping: dict[str, str] = {}
    for field in fields:
        matches = [role for role, words in roles.items() if any(w in field.lower() for w in words)]
        if len(matches) != 1:
            break
        mapping[field] = matches[0]
    if len(mapping) != len(fields) or sorted(mapping.values()) != sorted(roles):
        expected = ", ".join(f"{role} (a name with {'/'.join(w)})" for role, w in roles.items())
        raise PromptsError(
            f"{path}: {name} has placeholders {fields or 'none'}; expected one each for: {expected}"
        )
    return mapping


def _format_strings(path: Path) -> tuple[str, str]:
    """The output-format text of the system prompt and the reminder after the action."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, UnicodeDecodeError, SyntaxError) as e:
        raise PromptsError(f"{path}: cannot be read as Python source: {e}") from None
    function = next(
        (
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and n.name == "simulate_tool_call"
        ),
        None,
    )
    if function is None:
        raise PromptsError(f"{path}: no function simulate_tool_call")
    texts = [
        node.value
        for node in ast.walk(function)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and FORMAT_HEADING in node.value
    ]
    after = [text.split(FORMAT_HEADING, 1)[1].strip() for text in texts]
    if len(after) < 2:
        raise PromptsError(
            f"{path}: simulate_tool_call should hold two {FORMAT_HEADING!r} strings "
            f"(system prompt, reminder); found {len(after)}"
        )
    system, reminder = after[0], after[-1]
    return system, reminder


class ReleasePrompts(BaseModel):
    """The release's prompt constants, as the paper-style messages use them."""

    root: str = Field(description="The clone the constants were read from.")
    files: dict[str, str] = Field(description="File (relative to the clone) -> SHA-256.")
    agent_system: str = Field(description="The agent's system prompt: {scenario}, {date}.")
    verifier: str = Field(description="The verifier's request: the six section fields.")
    simulator_format: str = Field(description="Output-format text of the simulator prompt.")
    simulator_reminder: str = Field(description="The reminder after the current action.")
    fault_rules: FaultRules = Field(description="The fault rules of E1, E2, E3.")

    @classmethod
    def read(cls, root: str | Path) -> ReleasePrompts:
        """Read the constants from a clone of the release (module doc).

        Raises:
            PromptsError: a file or constant is missing, or its placeholders differ.
        """
        base = Path(root) / PACKAGE
        if not base.is_dir():
            raise PromptsError(f"{root}: no {PACKAGE}/ folder (give the clone's top folder)")
        paths = {
            name: base / f"{name}.py" for name in ("agent", "verifier", "fault_injection", "lwm")
        }
        for path in paths.values():
            if not path.is_file():
                raise PromptsError(f"{path}: not found in the clone")
        executor = _constant(paths["agent"], "EXECUTOR_SYSTEM_PROMPT")
        names = _roles(
            paths["agent"],
            "EXECUTOR_SYSTEM_PROMPT",
            executor,
            {"scenario": ("scenario",), "date": ("time", "date")},
        )
        verifier = _constant(paths["verifier"], "VERIFIER_PROMPT")
        if set(placeholders(verifier)) != VERIFIER_FIELDS:
            raise PromptsError(
                f"{paths['verifier']}: VERIFIER_PROMPT has placeholders "
                f"{sorted(set(placeholders(verifier)))}; expected {sorted(VERIFIER_FIELDS)}"
            )
        templates: dict[EnvMode, str] = {}
        fault_names: dict[str, str] = {}
        for mode in (EnvMode.E1, EnvMode.E2, EnvMode.E3):
            name = f"FAULT_PROMPT_{mode.value}"
            text = _constant(paths["fault_injection"], name)
            mapping = _roles(
                paths["fault_injection"],
                name,
                text,
                {"count": ("count", "num"), "duration": ("duration", "length")},
            )
            templates[mode] = renamed(text, mapping)
            fault_names.update(mapping)
        system_format, reminder = _format_strings(paths["lwm"])
        return cls(
            root=str(Path(root).resolve()),
            files={
                str(path.relative_to(Path(root))): hashlib.sha256(path.read_bytes()).hexdigest()
                for path in paths.values()
            },
            agent_system=renamed(executor, names),
            verifier=verifier,
            simulator_format=system_format,
            simulator_reminder=reminder,
            fault_rules=FaultRules(templates=templates, count="count", duration="duration"),
        )

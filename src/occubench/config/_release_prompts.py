"""The release's own prompt wording, read from a local clone of the public repository.

occubench ships only its own paraphrases of the release's prompts (they follow the
release's content points). A user with a clone of the public OccuBench repository can
have a run use the release's exact words (``prompts_from=DIR``): the constants are read
from its source files with ``ast`` (the files are never imported or run), each template's
placeholders are checked, and the files' SHA-256 go into the log.

Read from ``DIR/occubench/``: ``agent.py`` (``EXECUTOR_SYSTEM_PROMPT``: a scenario and a
time placeholder), ``verifier.py`` (``VERIFIER_PROMPT``: the six sections),
``fault_injection.py`` (``FAULT_PROMPT_E1``/``_E2``/``_E3``: a count and a duration
placeholder) and ``lwm.py`` (the output-format strings of ``simulate_tool_call``). A
constant is a string literal, or one with ``.strip()`` (the release writes its fault
prompts so).

A clone is input like any other. Each file is read within bounds before it is parsed
(``MAX_SOURCE_BYTES``; no statement of more than ``MAX_STATEMENT_TOKENS`` tokens, which
bounds the depth of the tree ``ast`` builds), and each template's placeholders must be
bare names (``{task_scenario_name}``: no format spec, conversion, index or attribute,
as in the release), so that filling a template adds nothing but the values put in
(a width such as ``{scenario:>4000000000}`` would make every sample allocate gigabytes).
"""

from __future__ import annotations

import ast
import hashlib
import io
import string
import tokenize
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from occubench.errors import UsageError
from occubench.faults import EnvMode, FaultRules

PACKAGE = "occubench"
"""The release's package folder inside a clone."""

FILES = ("agent", "verifier", "fault_injection", "lwm")
"""The release's modules the constants are read from (``PACKAGE/<name>.py``)."""

FORMAT_HEADING = "### OUTPUT FORMAT INSTRUCTIONS"

MAX_SOURCE_BYTES = 256 * 1024
"""Largest source file read (the release's are under 10 kB)."""
MAX_STATEMENT_TOKENS = 1_000
"""Most tokens in one statement (the release's longest has under 100).

``ast`` builds a tree as deep as an expression's chain of operators, on the stack.
"""

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


class PromptsError(UsageError):
    """A clone's file is missing, over a bound or not Python, or a constant is not as expected."""


def placeholders(template: str) -> list[str]:
    """The field names of a ``str.format`` template, in order."""
    return [name for _, name, _, _ in string.Formatter().parse(template) if name is not None]


def renamed(template: str, names: dict[str, str]) -> str:
    """The template (bare placeholders: ``checked``) with its placeholders renamed.

    Literal braces are kept doubled.
    """
    out = []
    for literal, name, _, _ in string.Formatter().parse(template):
        out.append(literal.replace("{", "{{").replace("}", "}}"))
        if name is not None:
            out.append("{" + names.get(name, name) + "}")
    return "".join(out)


@dataclass(frozen=True)
class _Source:
    """One of the release's files, read within bounds and parsed (never run)."""

    path: Path
    sha256: str
    """SHA-256 of its bytes (recorded in the log)."""
    tree: ast.Module

    @classmethod
    def read(cls, path: Path) -> _Source:
        """Read and parse ``path`` within the module's bounds.

        Raises:
            PromptsError: unreadable, too large, a statement too long, or not Python.
        """
        try:
            with path.open("rb") as handle:
                data = handle.read(MAX_SOURCE_BYTES + 1)
        except OSError as e:
            raise PromptsError(f"{path}: cannot be read: {e.strerror or e}") from None
        if len(data) > MAX_SOURCE_BYTES:
            raise PromptsError(f"{path}: larger than {MAX_SOURCE_BYTES} bytes")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise PromptsError(f"{path}: not UTF-8 text (byte {e.start})") from None
        try:
            _statements_within_bound(path, text)
            tree = ast.parse(text, filename=str(path))
        except SyntaxError as e:
            where = f"{path}, line {e.lineno}" if e.lineno else str(path)
            raise PromptsError(f"{where}: cannot be read as Python source: {e.msg}") from None
        except tokenize.TokenError as e:  # (message, (line, column))
            line = e.args[1][0] if len(e.args) > 1 else "?"
            raise PromptsError(
                f"{path}, line {line}: cannot be read as Python source: {e.args[0]}"
            ) from None
        except (RecursionError, MemoryError):  # a backstop: the token bound keeps trees shallow
            raise PromptsError(f"{path}: too deeply nested to be read as Python source") from None
        return cls(path, hashlib.sha256(data).hexdigest(), tree)

    def constants(self) -> dict[str, tuple[str, int]]:
        """Module-level string constants: name -> (value, line).

        A string literal, or a string literal's ``.strip()``; nothing else is evaluated.
        """
        found = {}
        for node in self.tree.body:
            if not isinstance(node, ast.Assign):
                continue
            value = _literal(node.value)
            if value is not None:
                for target in node.targets:
                    if isinstance(target, ast.Name):
                        found[target.id] = (value, node.lineno)
        return found

    def template(self, name: str) -> tuple[str, str]:
        """The constant ``name``, its placeholders ``checked``; and how messages name it."""
        found = self.constants().get(name)
        if found is None:
            raise PromptsError(f"{self.path}: no string constant {name}")
        text, line = found
        where = f"{self.path}, line {line}: {name}"
        checked(where, text)
        return text, where


def _literal(node: ast.expr) -> str | None:
    """The string of a literal, or of ``"...".strip()``; None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "strip"
        and not node.args
        and not node.keywords
    ):
        inner = _literal(node.func.value)
        return None if inner is None else inner.strip()
    return None


def _statements_within_bound(path: Path, text: str) -> None:
    """Refuse a statement of more than ``MAX_STATEMENT_TOKENS`` tokens, before parsing."""
    count = 0
    for token in tokenize.generate_tokens(io.StringIO(text).readline):
        if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            count = 0
        elif token.type not in (tokenize.NL, tokenize.COMMENT):
            count += 1
            if count > MAX_STATEMENT_TOKENS:
                raise PromptsError(
                    f"{path}, line {token.start[0]}: a statement of more than "
                    f"{MAX_STATEMENT_TOKENS} tokens (the release's prompts are string constants)"
                )


def checked(where: str, template: str) -> None:
    """Refuse a template whose placeholders are not bare names (module doc).

    A format spec (``{scenario:>4000000000}``, a width that fills gigabytes), a
    conversion, an index or an attribute is refused; so is a template ``str.format``
    cannot read (a lone brace). ``where`` names the file, line and constant.
    """
    try:
        fields = list(string.Formatter().parse(template))
    except ValueError as e:
        raise PromptsError(f"{where} is not a format template: {e}") from None
    for _, field, spec, conversion in fields:
        if field is None:
            continue
        if not field.isidentifier() or spec or conversion:
            shown = field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "")
            shown = shown if len(shown) <= 60 else shown[:57] + "..."
            raise PromptsError(
                f"{where} has the placeholder {{{shown}}}; a placeholder is a bare name, as "
                "{task_scenario_name} (no format spec, conversion, index or attribute)"
            )


def _roles(where: str, template: str, roles: dict[str, tuple[str, ...]]) -> dict[str, str]:
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
            f"{where} has placeholders {fields or 'none'}; expected one each for: {expected}"
        )
    return mapping


def _format_strings(source: _Source) -> tuple[str, str]:
    """The output-format text of the system prompt and the reminder after the action."""
    path = source.path
    function = next(
        (
            n
            for n in ast.walk(source.tree)
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
        paths = {name: base / f"{name}.py" for name in FILES}
        for path in paths.values():
            if not path.is_file():
                raise PromptsError(f"{path}: not found in the clone")
        sources = {name: _Source.read(path) for name, path in paths.items()}
        executor, where = sources["agent"].template("EXECUTOR_SYSTEM_PROMPT")
        names = _roles(where, executor, {"scenario": ("scenario",), "date": ("time", "date")})
        verifier, where = sources["verifier"].template("VERIFIER_PROMPT")
        if set(placeholders(verifier)) != VERIFIER_FIELDS:
            raise PromptsError(
                f"{where} has placeholders {sorted(set(placeholders(verifier)))}; "
                f"expected {sorted(VERIFIER_FIELDS)}"
            )
        templates: dict[EnvMode, str] = {}
        for mode in (EnvMode.E1, EnvMode.E2, EnvMode.E3):
            text, where = sources["fault_injection"].template(f"FAULT_PROMPT_{mode.value}")
            mapping = _roles(
                where, text, {"count": ("count", "num"), "duration": ("duration", "length")}
            )
            templates[mode] = renamed(text, mapping)
        system_format, reminder = _format_strings(sources["lwm"])
        return cls(
            root=str(Path(root).resolve()),
            files={
                str(source.path.relative_to(Path(root))): source.sha256
                for source in sources.values()
            },
            agent_system=renamed(executor, names),
            verifier=verifier,
            simulator_format=system_format,
            simulator_reminder=reminder,
            fault_rules=FaultRules(templates=templates, count="count", duration="duration"),
        )

"""Check a whole dataset folder before any model call: every problem at once, placed.

``load_dataset`` reads what a run selects and stops at the first folder that cannot run;
``check_dataset`` is the author's gate. It reads every task, every scenario and every env
config in ``world_model_configs/`` (those no task uses too) with the same reader (bounds,
the folder rule), and adds the rules a run would otherwise meet late:

- the tools a task names (its reference plan's steps, its checks) exist in its env, and
  a plan step's arguments pass the tool's schema; so do the env's canned observations;
- the initial state and the state description name the same fields;
- an env has 1 to ``MAX_TOOLS`` tools, and its config is named by its file;
- no string still begins with ``PLACEHOLDER`` (the skeleton ``occubench env new`` writes
  says what to put in each field that way).

Each problem names its file, line and field.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator
from pydantic import ValidationError

from occubench.dataset._errors import (
    DatasetError,
    DatasetIssue,
    field_path,
    json_lines,
    line_of,
)
from occubench.dataset._loader import (
    CONFIGS_DIR,
    SCENARIOS_FILE,
    TASKS_FILE,
    _check_unique_ids,
    _Reader,
)
from occubench.dataset._models import (
    EnvConfig,
    OrderCheck,
    Scenario,
    TaskRecord,
    ToolCalledCheck,
    ToolNotCalledCheck,
    ToolSpec,
)
from occubench.dataset._suite import shared_dir
from occubench.dataset._tool_schema import tool_params
from occubench.defaults import DEFAULT_MAX_DATASET_FILE_BYTES

MAX_TOOLS = 128
"""Most tools one request may offer a model (OpenAI's limit; others are near it)."""
PLACEHOLDER = "TODO"
"""How a string the author has still to write begins (the skeleton's explanations)."""
MAX_CONFIGS = 10_000
"""Most env configs one check reads (the release has 382)."""

Place = tuple[int | str, ...]


@dataclass
class DatasetCheck:
    """What ``check_dataset`` found: the records that validate, every problem, the warnings."""

    root: Path
    tasks: list[TaskRecord]
    envs: dict[str, EnvConfig]
    scenarios: dict[str, Scenario]
    issues: list[DatasetIssue] = field(default_factory=list)
    warnings: list[DatasetIssue] = field(default_factory=list)

    def env_path(self, name: str) -> Path:
        """The file of the env config ``name``."""
        return shared_dir(self.root) / CONFIGS_DIR / f"{name}.json"

    def tasks_of(self, env: str) -> list[TaskRecord]:
        """The tasks set in the env ``env``."""
        return [t for t in self.tasks if t.env_name == env]


def load_env(
    root: str | Path, name: str, max_file_bytes: int = DEFAULT_MAX_DATASET_FILE_BYTES
) -> EnvConfig:
    """One env config of a dataset folder, read as the loader reads it.

    Raises:
        DatasetError: it is missing, outside the folder, too large or invalid.
    """
    issues: list[DatasetIssue] = []
    env = _Reader(Path(root), max_file_bytes, issues).env(name, None, [])
    if env is None or issues:
        raise DatasetError(issues)
    return env


def check_dataset(
    root: str | Path, max_file_bytes: int = DEFAULT_MAX_DATASET_FILE_BYTES
) -> DatasetCheck:
    """Every problem of a dataset folder, each with its file, line and field (module doc).

    Never raises for what the folder holds: a folder that cannot be read at all is one
    problem in the result.
    """
    root = Path(root)
    if not root.is_dir():
        found = DatasetIssue(file=str(root), message="dataset folder not found")
        return DatasetCheck(root=root, tasks=[], envs={}, scenarios={}, issues=[found])
    issues: list[DatasetIssue] = []
    warnings: list[DatasetIssue] = []
    reader = _Reader(root, max_file_bytes, issues)
    numbered = reader.jsonl(root / TASKS_FILE, TaskRecord)
    pool = reader.jsonl(reader.shared / SCENARIOS_FILE, Scenario)
    scenarios = {s.task_scenario_name: s for _, s in pool}
    _check_unique_ids(root / TASKS_FILE, numbered, issues)
    check = DatasetCheck(
        root=root,
        tasks=[task for _, task in numbered],
        envs={},
        scenarios=scenarios,
        issues=issues,
        warnings=warnings,
    )
    folder = reader.shared / CONFIGS_DIR
    files = sorted(folder.glob("*.json"))[:MAX_CONFIGS] if folder.is_dir() else []
    if not folder.is_dir():
        issues.append(DatasetIssue(file=str(folder), message="folder not found"))
    for path in files:
        env = reader.env(path.stem, None, warnings)
        if env is not None:
            check.envs[path.stem] = env
            _check_env(check, path, reader.texts[path], env)
    tasks_file = root / TASKS_FILE
    used = set()
    for line, task in numbered:
        used.add(task.env_name)
        if task.env_name not in check.envs and not check.env_path(task.env_name).is_file():
            issues.append(
                DatasetIssue(
                    file=str(tasks_file),
                    line=line,
                    field="env_name",
                    message=f"task {task.task_id}: no env config {task.env_name}.json in "
                    f"{CONFIGS_DIR}/",
                )
            )
        if task.task_scenario_name not in scenarios:
            warnings.append(
                DatasetIssue(
                    file=str(tasks_file),
                    line=line,
                    field="task_scenario_name",
                    message=f"task {task.task_id}: scenario {task.task_scenario_name!r} is not "
                    f"in {SCENARIOS_FILE}: its industry and domain will be 'Unknown'",
                )
            )
        _check_task(check, line, task)
    for name in sorted(set(check.envs) - used):
        warnings.append(
            DatasetIssue(file=str(check.env_path(name)), message="no task uses this env")
        )
    for listed in (issues, warnings):
        listed.sort(key=lambda issue: (issue.file, issue.line or 0))
    return check


def _check_env(check: DatasetCheck, path: Path, text: str, env: EnvConfig) -> None:
    """The rules of one env config that validated (module doc)."""
    lines = json_lines(text)

    def problem(place: Place, message: str) -> None:
        check.issues.append(
            DatasetIssue(
                file=str(path),
                line=line_of(lines, place),
                field=field_path(place) or None,
                message=message,
            )
        )

    if env.environment_name != path.stem:
        problem(
            ("environment_name",),
            f"is {env.environment_name!r}, but the file is {path.name}: runs name an env by "
            "its file (tasks' env_name)",
        )
    tools = env.action_set_definitions
    if not tools:
        problem(("action_set_definitions",), "an environment needs at least one tool")
    if len(tools) > MAX_TOOLS:
        problem(
            ("action_set_definitions",),
            f"{len(tools)} tools: a model request may offer at most {MAX_TOOLS}",
        )
    state, described = env.task_initial_state, env.state_description
    for key in state.keys() - described.keys():
        problem(("task_initial_state", key), f"field {key!r} has no entry in state_description")
    for key in described.keys() - state.keys():
        problem(
            ("state_description", key),
            f"describes field {key!r}, which task_initial_state does not have",
        )
    specs = {t.name: t for t in tools}
    for i, canned in enumerate(env.canned_observations or []):
        for place, message in _call_problems(path.stem, specs, canned.tool, canned.arguments):
            problem(("canned_observations", i, *place), message)
    for place, text_value in _placeholders(env.model_dump(mode="json", exclude_none=True)):
        problem(place, _placeholder_message(text_value))


def _check_task(check: DatasetCheck, line: int, task: TaskRecord) -> None:
    """The rules of one task line that validated (module doc)."""
    path = str(check.root / TASKS_FILE)

    def problem(place: Place, message: str) -> None:
        check.issues.append(
            DatasetIssue(
                file=path,
                line=line,
                field=field_path(place) or None,
                message=f"task {task.task_id}: {message}",
            )
        )

    for place, text_value in _placeholders(task.model_dump(mode="json", exclude_none=True)):
        problem(place, _placeholder_message(text_value))
    env = check.envs.get(task.env_name)
    if env is None:
        return  # its config is missing or invalid: said already
    specs = {t.name: t for t in env.action_set_definitions}
    steps = task.reference_plan.steps if task.reference_plan else []
    for i, step in enumerate(steps):
        for place, message in _call_problems(task.env_name, specs, step.tool, step.arguments):
            problem(("reference_plan", "steps", i, *place), message)
    for i, item in enumerate(task.checks or []):
        named: list[tuple[Place, str]] = []
        if isinstance(item, ToolCalledCheck | ToolNotCalledCheck):
            named = [(("tool",), item.tool)]
        elif isinstance(item, OrderCheck):
            named = [(("tools", j), tool) for j, tool in enumerate(item.tools)]
        for place, tool in named:
            if tool not in specs:
                problem(("checks", i, *place), _unknown_tool(tool, task.env_name, specs))


def _call_problems(
    env: str, specs: dict[str, ToolSpec], tool: str, arguments: dict[str, Any]
) -> list[tuple[Place, str]]:
    """Why a call a record names could not be made in ``env``: no such tool, bad arguments."""
    spec = specs.get(tool)
    if spec is None:
        return [(("tool",), _unknown_tool(tool, env, specs))]
    try:
        schema = tool_params(spec).model_dump(exclude_none=True)  # as calls are checked
    except ValidationError:
        return []  # a schema Inspect refuses: said with the tool's own problems
    try:
        errors = sorted(Draft7Validator(schema).iter_errors(arguments), key=lambda e: list(e.path))
    except RecursionError:
        return [(("arguments",), "nest too deeply to check")]
    return [
        (("arguments", *e.absolute_path), f"fail the schema of {tool!r}: {e.message}")
        for e in errors
    ]


def _unknown_tool(tool: str, env: str, specs: dict[str, ToolSpec]) -> str:
    return f"names tool {tool!r}, which env {env!r} does not have (tools: {', '.join(specs)})"


def _placeholders(value: Any, place: Place = ()) -> Iterator[tuple[Place, str]]:
    """Every string of a record that still begins with ``PLACEHOLDER``, with its place."""
    stack: list[tuple[Any, Place]] = [(value, place)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            if item.lstrip().startswith(PLACEHOLDER):
                yield where, item
        elif isinstance(item, dict):
            stack += [(v, (*where, k)) for k, v in reversed(item.items())]
        elif isinstance(item, list):
            stack += [(v, (*where, i)) for i, v in reversed(list(enumerate(item)))]


def _placeholder_message(text: str) -> str:
    shown = text if len(text) <= 120 else text[:117] + "..."
    return f"still a placeholder ({PLACEHOLDER}): write it: {shown!r}"

"""Read and write a dataset folder in the public OccuBench release layout.

```
DIR/eval_benchmark_solvable.jsonl     one task a line
DIR/task_scenario_all_pool.jsonl      one scenario a line (category, domain, name)
DIR/world_model_configs/ENV.json      one env config a file, named by env_name
```

Every file is read as a stream, at most ``max_file_bytes`` of it (a larger file is a
problem reported, not a MemoryError), and only when its real path, symlinks resolved,
is inside the dataset folder: a config that links to a file elsewhere is never read (its
content would go to the simulator's provider). A built-in dataset reads the reference
suite's scenario pool and env configs (``shared_dir``): the suite's folder is then inside
too.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar

from pydantic import BaseModel, ValidationError

from occubench.dataset._errors import (
    DatasetError,
    DatasetIssue,
    Path_,
    issues_from_validation,
    json_lines,
)
from occubench.dataset._models import EnvConfig, Scenario, TaskRecord, ToolSpec
from occubench.dataset._suite import dataset_label, shared_dir
from occubench.dataset._tool_schema import check_tool, is_schema_keyword
from occubench.defaults import DEFAULT_MAX_DATASET_FILE_BYTES, DEFAULT_MAX_JSON_DEPTH

logger = logging.getLogger(__name__)

TASKS_FILE = "eval_benchmark_solvable.jsonl"
SCENARIOS_FILE = "task_scenario_all_pool.jsonl"
CONFIGS_DIR = "world_model_configs"
UNKNOWN = "Unknown"
"""Industry and domain of a task whose scenario is not in the pool."""

MAX_DEPTH = DEFAULT_MAX_JSON_DEPTH
"""Deepest JSON nesting accepted in a dataset file (``DEFAULT_MAX_JSON_DEPTH``)."""

M = TypeVar("M", bound=BaseModel)
_INVALID = object()
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
_NAME_FIELDS = {"task_scenario_name", "category", "domain", "env_name"}
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


@dataclass
class Dataset:
    """Tasks with their env configs and the scenario pool, validated."""

    root: Path
    tasks: list[TaskRecord]
    envs: dict[str, EnvConfig]
    scenarios: dict[str, Scenario]
    warnings: list[DatasetIssue] = field(default_factory=list)

    def industry(self, task: TaskRecord) -> str:
        """The task's industry (the scenario pool's category)."""
        scenario = self.scenarios.get(task.task_scenario_name)
        return scenario.category if scenario else UNKNOWN

    def domain(self, task: TaskRecord) -> str:
        """The task's domain."""
        scenario = self.scenarios.get(task.task_scenario_name)
        return scenario.domain if scenario else UNKNOWN

    def env(self, task: TaskRecord) -> EnvConfig:
        """The task's env config."""
        return self.envs[task.env_name]


def load_dataset(
    root: str | Path,
    *,
    task_ids: Sequence[int] | None = None,
    categories: Sequence[str] | None = None,
    domains: Sequence[str] | None = None,
    difficulties: Sequence[int] | None = None,
    max_file_bytes: int = DEFAULT_MAX_DATASET_FILE_BYTES,
) -> Dataset:
    """Load and validate a dataset folder, keeping the tasks that pass every filter.

    Only the env configs of the selected tasks are read. Every problem found (bad JSON,
    missing or mistyped field, invalid tool schema, duplicate tool or task id with both
    lines, a task id that is not an integer, missing config, a file outside the folder
    or larger than ``max_file_bytes``, unknown filter value) is collected and raised at
    once as ``DatasetError``. Tool schema keywords Inspect would drop are logged as
    warnings and kept in ``Dataset.warnings``.
    """
    root = Path(root)
    issues: list[DatasetIssue] = []
    if not root.is_dir():
        raise DatasetError([DatasetIssue(file=str(root), message="dataset folder not found")])
    reader = _Reader(root, max_file_bytes, issues)
    numbered = reader.jsonl(root / TASKS_FILE, TaskRecord)
    tasks = [task for _, task in numbered]
    pool = reader.jsonl(reader.shared / SCENARIOS_FILE, Scenario)
    scenarios = {s.task_scenario_name: s for _, s in pool}
    _check_unique_ids(root / TASKS_FILE, numbered, issues)

    selected = _select(root, tasks, scenarios, issues, task_ids, categories, domains, difficulties)
    lines = {id(task): number for number, task in numbered}
    warnings: list[DatasetIssue] = []
    envs: dict[str, EnvConfig] = {}
    read: set[str] = set()
    for task in selected:
        if task.env_name in read:
            continue
        read.add(task.env_name)
        where = DatasetIssue(
            file=str(root / TASKS_FILE), line=lines[id(task)], field="env_name", message=""
        )
        env = reader.env(task.env_name, where, warnings)
        if env is not None:
            envs[task.env_name] = env
    for task in selected:
        if task.task_scenario_name not in scenarios:
            warnings.append(
                DatasetIssue(
                    file=str(root / TASKS_FILE),
                    field="task_scenario_name",
                    message=f"task {task.task_id}: scenario {task.task_scenario_name!r} is "
                    f"not in {SCENARIOS_FILE}; industry and domain are {UNKNOWN!r}",
                )
            )
    if issues:
        raise DatasetError(issues)
    for warning in warnings:
        logger.warning("%s", warning)
    return Dataset(root=root, tasks=selected, envs=envs, scenarios=scenarios, warnings=warnings)


def write_dataset(
    root: str | Path,
    tasks: Iterable[TaskRecord],
    envs: Iterable[EnvConfig],
    scenarios: Iterable[Scenario],
) -> Path:
    """Write a dataset folder in the release layout (extension fields included when set)."""
    root = Path(root)
    (root / CONFIGS_DIR).mkdir(parents=True, exist_ok=True)
    _write_jsonl(root / TASKS_FILE, tasks)
    _write_jsonl(root / SCENARIOS_FILE, scenarios)
    for env in envs:
        path = root / CONFIGS_DIR / f"{env.environment_name}.json"
        path.write_text(json.dumps(_dump(env), indent=2, ensure_ascii=False) + "\n")
    return root


def _dump(record: BaseModel) -> dict[str, Any]:
    return record.model_dump(mode="json", exclude_none=True)


def _write_jsonl(path: Path, records: Iterable[BaseModel]) -> None:
    lines = [json.dumps(_dump(r), ensure_ascii=False) for r in records]
    path.write_text("".join(line + "\n" for line in lines))


def _decode(raw: bytes, path: Path, line: int | None, issues: list[DatasetIssue]) -> str | None:
    """UTF-8 text of ``raw``; None (and an issue at its line) when it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        where = line if line is not None else raw.count(b"\n", 0, e.start) + 1
        issues.append(DatasetIssue(file=str(path), line=where, message="not UTF-8 text"))
        return None


def _parse(text: str, path: Path, line: int | None, issues: list[DatasetIssue]) -> Any:
    """Parse JSON no deeper than ``MAX_DEPTH``; ``_INVALID`` (and an issue) otherwise."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        message, line = f"bad JSON: {e.msg}", line if line is not None else e.lineno
    except RecursionError:
        message = f"nested more than {MAX_DEPTH} levels"
    except ValueError as e:  # e.g. an integer of more digits than Python converts
        message = f"bad JSON: {str(e).split(';')[0]}"
    else:
        if json_depth(data) <= MAX_DEPTH:
            return data
        message = f"nested more than {MAX_DEPTH} levels"
    issues.append(DatasetIssue(file=str(path), line=line, message=message))
    return _INVALID


def json_depth(value: Any) -> int:
    """Nesting depth of parsed JSON (iterative: safe on any input)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack += [(v, level + 1) for v in (item.values() if isinstance(item, dict) else item)]
    return deepest


def _check_unique_ids(
    path: Path, tasks: list[tuple[int, TaskRecord]], issues: list[DatasetIssue]
) -> None:
    first: dict[int, int] = {}
    for number, task in tasks:
        if task.task_id in first:
            issues.append(
                DatasetIssue(
                    file=str(path),
                    line=number,
                    field="task_id",
                    message=f"duplicate task_id {task.task_id}: lines {first[task.task_id]} "
                    f"and {number}",
                )
            )
        first.setdefault(task.task_id, number)


class _Reader:
    """Reads the files of one dataset folder, each problem an issue (module doc)."""

    def __init__(self, root: Path, max_bytes: int, issues: list[DatasetIssue]) -> None:
        self.folder = root
        self.root = root.resolve()
        self.shared = shared_dir(root)
        """The folder of the scenario pool and the env configs (``shared_dir``)."""
        self.max_bytes = max_bytes
        self.issues = issues
        self.texts: dict[Path, str] = {}
        """The text of every env config read (valid JSON)."""

    def open(self, path: Path, referrer: DatasetIssue | None = None) -> IO[bytes] | None:
        """The file as a binary stream, if inside the folder and within the size limit.

        Otherwise an issue (at ``referrer`` when given: the line that names the file)
        and None.
        """

        def refuse(message: str) -> None:
            if referrer is None:
                self.issues.append(DatasetIssue(file=str(path), message=message))
            else:
                self.issues.append(referrer.model_copy(update={"message": f"{path}: {message}"}))

        real = path.resolve()
        if not any(real.is_relative_to(inside) for inside in (self.root, self.shared.resolve())):
            refuse(
                f"resolves to {real}, outside the dataset folder {self.root}: refused "
                "(copy the file into the folder, e.g. with cp -L)"
            )
            return None
        try:
            size = real.stat().st_size
            if size > self.max_bytes:
                refuse(f"{size} bytes, more than the limit of {self.max_bytes}: not read")
                return None
            return real.open("rb")
        except OSError as e:
            refuse(f"cannot read: {e.strerror or e}")
            return None

    def read(self, path: Path, referrer: DatasetIssue | None = None) -> bytes | None:
        """The whole file (``open``'s checks, and never more than the limit)."""
        stream = self.open(path, referrer)
        if stream is None:
            return None
        with stream:
            data = stream.read(self.max_bytes + 1)
        if len(data) > self.max_bytes:  # it grew while read
            self.issues.append(
                DatasetIssue(file=str(path), message=f"more than {self.max_bytes} bytes: not read")
            )
            return None
        return data

    def jsonl(self, path: Path, model: type[M]) -> list[tuple[int, M]]:
        """The valid records of a JSON-lines file with their line numbers, read as a stream."""
        if not path.is_file():
            self.issues.append(DatasetIssue(file=str(path), message="file not found"))
            return []
        stream = self.open(path)
        if stream is None:
            return []
        records: list[tuple[int, M]] = []
        read = 0
        with stream:
            # Lines end at "\n" only: str.splitlines() would also split at U+2028 and other
            # separators, which JSON strings may hold raw (write_dataset writes them so).
            for number, chunk in enumerate(iter(lambda: stream.readline(self.max_bytes), b""), 1):
                read += len(chunk)
                if read > self.max_bytes:  # it grew while read
                    self.issues.append(
                        DatasetIssue(
                            file=str(path),
                            line=number,
                            message=f"more than {self.max_bytes} bytes: not read further",
                        )
                    )
                    break
                record = self._record(path, number, chunk.removesuffix(b"\n"), model)
                if record is not None:
                    records.append((number, record))
        return records

    def _record(self, path: Path, number: int, chunk: bytes, model: type[M]) -> M | None:
        issues = self.issues
        line = _decode(chunk, path, number, issues)
        if line is None or not line.strip():
            return None
        data = _parse(line, path, number, issues)
        if data is _INVALID:
            return None
        if not isinstance(data, dict):
            issues.append(
                DatasetIssue(file=str(path), line=number, message="a line must be a JSON object")
            )
            return None
        try:
            record = model.model_validate(data)
        except ValidationError as e:
            issues += issues_from_validation(e, path, number)
            return None
        for name in _NAME_FIELDS & set(model.model_fields):
            value = getattr(record, name)
            if _UNPRINTABLE.search(value):  # names reach terminals, Inspect's display included
                issues.append(
                    DatasetIssue(
                        file=str(path),
                        line=number,
                        field=name,
                        message=f"control characters in a name: {value!r}",
                    )
                )
        return record

    def env(
        self, name: str, referrer: DatasetIssue | None, warnings: list[DatasetIssue]
    ) -> EnvConfig | None:
        """The env config ``name`` (``referrer``: the task line that names it, if one does).

        Its text is kept in ``texts`` (problems found later are placed by line).
        """
        path = self.shared / CONFIGS_DIR / f"{name}.json"
        issues = self.issues
        if Path(name).name != name or name in ("", ".", ".."):  # no path out of CONFIGS_DIR
            issues.append(
                DatasetIssue(
                    file=str(path),
                    field="env_name",
                    message=f"env_name {name!r} must be a file name in {CONFIGS_DIR}/",
                )
            )
            return None
        if not path.is_file():
            issues.append(DatasetIssue(file=str(path), message=f"env config {name!r} not found"))
            return None
        raw = self.read(path, referrer)
        text = None if raw is None else _decode(raw, path, None, issues)
        data = _INVALID if text is None else _parse(text, path, None, issues)
        if data is _INVALID or text is None:
            return None
        self.texts[path] = text
        try:
            env = EnvConfig.model_validate(data)
        except ValidationError as e:
            issues += issues_from_validation(e, path, None, text)
            _check_tools(path, text, _valid_tools(data), issues, warnings)
            return None
        _check_tools(path, text, env.action_set_definitions, issues, warnings)
        return env


def _select(
    root: Path,
    tasks: list[TaskRecord],
    scenarios: dict[str, Scenario],
    issues: list[DatasetIssue],
    task_ids: Sequence[int] | None,
    categories: Sequence[str] | None,
    domains: Sequence[str] | None,
    difficulties: Sequence[int] | None,
) -> list[TaskRecord]:
    def unknown(kind: str, wanted: Iterable[Any], known: Iterable[Any]) -> None:
        known = sorted(set(known), key=_natural)
        missing = sorted(set(wanted) - set(known), key=_natural)
        if missing:
            issues.append(
                DatasetIssue(
                    file=dataset_label(root),
                    message=f"{len(missing)} unknown {kind}: {first_few(missing)}; the dataset "
                    f"has {len(known)}: {first_few(known)}",
                )
            )

    def scenario_field(task: TaskRecord, name: str) -> str:
        scenario = scenarios.get(task.task_scenario_name)
        return getattr(scenario, name) if scenario else UNKNOWN

    if task_ids is not None:
        unknown("task ids", task_ids, (t.task_id for t in tasks))
        tasks = [t for t in tasks if t.task_id in set(task_ids)]
    if categories is not None:
        unknown("industries", categories, [s.category for s in scenarios.values()] + [UNKNOWN])
        tasks = [t for t in tasks if scenario_field(t, "category") in set(categories)]
    if domains is not None:
        unknown("domains", domains, [s.domain for s in scenarios.values()] + [UNKNOWN])
        tasks = [t for t in tasks if scenario_field(t, "domain") in set(domains)]
    if difficulties is not None:
        tasks = [t for t in tasks if t.difficulty_level in set(difficulties)]
    return tasks


_SHOWN = 12
"""Values an unknown-value error quotes at most, of the asked and of the known."""


def _natural(value: Any) -> tuple[int, float, str]:
    """Numbers in numeric order, before text in text order."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (0, float(value), "")
    return (1, 0.0, str(value))


def first_few(values: Sequence[Any]) -> str:
    """The first few values, comma-separated, with how many more there are."""
    shown = ", ".join(map(str, values[:_SHOWN]))
    return shown + (f", ... ({len(values) - _SHOWN} more)" if len(values) > _SHOWN else "")


def _valid_tools(data: Any) -> list[ToolSpec]:
    """The tool definitions that validate on their own (to check them despite other errors)."""
    raw = data.get("action_set_definitions") if isinstance(data, dict) else None
    tools = []
    for item in raw if isinstance(raw, list) else []:
        try:
            tools.append(ToolSpec.model_validate(item))
        except ValidationError:
            continue  # already reported with the config's own errors
    return tools


def _check_tools(
    path: Path,
    text: str,
    tools: list[ToolSpec],
    issues: list[DatasetIssue],
    warnings: list[DatasetIssue],
) -> None:
    seen: list[str] = []
    places: dict[Path_, int] = {}  # every place's line, found when an issue needs one
    for i, tool in enumerate(tools):
        where = f"action_set_definitions[{i}]"
        line = _line_of(text, f'"{tool.name}"', seen.count(tool.name))

        def at(
            field: str, message: str, line: int | None = line, where: str = where, i: int = i
        ) -> DatasetIssue:
            """An issue at ``field`` of this tool: at the field's own line when it is found."""
            if field.startswith(f"{where}.parameters"):
                steps = field.removeprefix(f"{where}.").split(".")
                if not places:
                    places.update(json_lines(text))
                line = places.get(("action_set_definitions", i, *steps)) or line
            return DatasetIssue(file=str(path), line=line, field=field, message=message)

        if tool.name in seen:
            issues.append(at(f"{where}.name", f"duplicate tool name {tool.name!r}"))
        seen.append(tool.name)
        if not _TOOL_NAME.fullmatch(tool.name):
            warnings.append(
                at(
                    f"{where}.name",
                    f"tool name {tool.name!r} will be refused by provider APIs "
                    "(they take 1-64 letters, digits, '_' or '-')",
                )
            )
        errors, lost = check_tool(tool)
        issues += [at(f"{where}.{sub}", message) for sub, message in errors]
        dropped = [kw for kw in lost if is_schema_keyword(kw)]
        strays = [kw for kw in lost if not is_schema_keyword(kw)]
        if dropped:
            warnings.append(
                at(
                    f"{where}.parameters",
                    f"tool {tool.name!r}: Inspect's tool schemas drop the JSON-Schema "
                    f"keywords {', '.join(dropped)}, so the agent's arguments are not "
                    "checked against them",
                )
            )
        if strays:
            warnings.append(
                at(
                    f"{where}.parameters",
                    f"tool {tool.name!r}: {', '.join(strays)} in its parameters is not a "
                    "JSON-Schema keyword (misplaced?); it is left out of the schema the "
                    "agent is shown",
                )
            )


def _line_of(text: str, needle: str, skip: int = 0) -> int | None:
    """Line of the (skip+1)-th occurrence of ``needle`` (a repeated name: its own line)."""
    pos = -1
    for _ in range(skip + 1):
        pos = text.find(needle, pos + 1)
        if pos < 0:
            return None
    return text.count("\n", 0, pos) + 1

"""``occubench env new``: a new environment and its first task, as files to fill in.

The files are in the release layout, valid as they stand: a line appended to
``eval_benchmark_solvable.jsonl`` (the task), one to ``task_scenario_all_pool.jsonl``
(its scenario, if new), and ``world_model_configs/NAME.json`` (the env config). JSON has
no comments, so each string the author has to write says what to write there and begins
with ``PLACEHOLDER`` ("TODO"); ``occubench env check`` lists every one still left, each
with its file, line and field, until none is. ``FIELDS.md`` beside them explains every
field of every file; it is generated from the models' own field descriptions, so it says
what the loader reads.

Beside them, ``twins/NAME.py`` is the env's twin to fill in (``skeleton_twin``): a
``Twin`` subclass with one ``@tool`` method per tool of the config, each answering its
tool's ``example_output`` until the author makes it answer from the state. It loads
only when its folder is named (``--twins DIR/twins``).
"""

from __future__ import annotations

import json
import pprint
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from occubench.dataset import (
    CONFIGS_DIR,
    PLACEHOLDER,
    SCENARIOS_FILE,
    TASKS_FILE,
    AnswerContainsCheck,
    AnswerExcludesCheck,
    EnvConfig,
    OrderCheck,
    PlanStep,
    ReferencePlan,
    Scenario,
    StateEqualsCheck,
    TaskRecord,
    ToolCalledCheck,
    ToolNotCalledCheck,
    ToolSpec,
    check_dataset,
)
from occubench.errors import UsageError
from occubench.files import write_fresh

ENV_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
"""An env's name: its config's file stem (lower-case letters, digits, ``_``)."""
FIELDS_FILE = "FIELDS.md"
TWINS_DIR = "twins"
"""The folder of the dataset's twins that ``env new`` writes (named with ``--twins``)."""
_NAME_TEXT = re.compile(r"[^\x00-\x1f\x7f]{1,120}")


class NewEnv(BaseModel):
    """What ``new_env`` wrote."""

    root: Path = Field(description="The dataset folder.")
    env: str = Field(description="The env's name.")
    task_id: int = Field(description="The new task's id.")
    scenario: str = Field(description="The task's scenario.")
    written: list[Path] = Field(description="Files written or added to.")
    kept: list[Path] = Field(
        default_factory=list,
        description="Files left as they were: not written by occubench (a FIELDS.md of "
        "the user's own, or a link).",
    )


def _todo(text: str) -> str:
    return f"{PLACEHOLDER}: {text}"


def skeleton_env(name: str) -> EnvConfig:
    """The env config to fill in: one tool, one state field, each field saying what it wants."""
    return EnvConfig(
        environment_name=name,
        world_model_system_prompt=_todo(
            "Say what system the simulator plays and for whom, e.g. 'You simulate the "
            "records system a <role> uses for <work>. Answer each action with the "
            "observation the real system would return, consistent with the state below and "
            "with earlier observations. Unknown identifiers get a structured error such as "
            '{"error": {"code": "NOT_FOUND", "message": "..."}}; never invent records.\''
        ),
        action_set_definitions=[
            ToolSpec(
                name="get_record",
                description=_todo(
                    "What this tool does, as the agent reads it (rename the tool, add more)."
                ),
                parameters={
                    "type": "object",
                    "properties": {
                        "record_id": {
                            "type": "string",
                            "description": _todo("What the argument is, with an example value."),
                        }
                    },
                    "required": ["record_id"],
                },
                example_output={
                    "record_id": "R-1001",
                    "status": _todo("an example of what the tool returns"),
                },
            )
        ],
        task_initial_state={
            "records": [
                {"record_id": "R-1001", "status": _todo("the facts the simulator must keep to")}
            ]
        },
        state_description={
            "records": _todo("What the 'records' field of the state holds (one entry a field).")
        },
    )


_TWIN_TOOL = '''
    @tool
    def {name}(self, arguments: dict[str, Any]) -> Answer:
        """TODO: answer {name} from ``self.state`` exactly as the config reads.

        Read the arguments (checked against the tool's schema already), look the records
        up in ``self.state`` and change it in place for a write; answer an unknown id with
        ``self.error(...)`` worded as the config's errors are; list in ``free`` the JSON
        Pointers of the observation's parts the config leaves open (the twin chooses them
        deterministically; nothing compares them). Until then it answers the example.
        """
        return Answer(
            observation={example}
        )
'''


_EXAMPLE_INDENT = len("            observation=")
"""Where an example observation starts in a twin stub's line."""
_EXAMPLE_WIDTH = 100 - _EXAMPLE_INDENT - 2
"""Columns of an example observation in a twin stub (its lines stay within 100)."""


def skeleton_twin(env: EnvConfig) -> str:
    """The twin of a new env to fill in: one ``@tool`` stub per tool of its config."""
    words = "".join(part.title() for part in env.environment_name.split("_"))
    methods = [
        _TWIN_TOOL.format(
            name=spec.name,
            example=pprint.pformat(
                spec.example_output if isinstance(spec.example_output, dict) else {},
                width=_EXAMPLE_WIDTH,
                sort_dicts=False,
            ).replace("\n", "\n" + " " * _EXAMPLE_INDENT),
        )
        for spec in env.action_set_definitions
    ]
    return f'''"""Twin of ``{env.environment_name}``.

The environment as code, exactly as its config reads. TODO: say here how this twin
reads each ambiguity of its config (what an unknown id answers, which observation
fields the config leaves open, what each write changes), then implement each tool
below. Try it: ``occubench env try DIR --simulator-model occubench/twin --twins
DIR/twins ...`` answers from it; tests/twins/test_package_twins.py shows the checks
a twin passes (observations fit example_output, unknown ids get the config's error,
a reference plan solves each task).
"""

from __future__ import annotations

from typing import Any

from occubench.twins import Answer, Twin, tool


class {words}Twin(Twin):
    """TODO: what this environment is, as code."""

    environment = "{env.environment_name}"
''' + "".join(methods)


def skeleton_task(task_id: int, scenario: str, env: str) -> TaskRecord:
    """The task to fill in."""
    return TaskRecord(
        task_id=task_id,
        difficulty_level=1,
        task_scenario_name=scenario,
        agent_instruction=_todo(
            "What the agent must do, as a person in the role would be asked: the records, "
            "the decision, what to report."
        ),
        env_name=env,
        verification_plan=_todo(
            "How a judge decides the task was done: the facts the answer must state, which "
            "tool's observation each comes from, and what means FAILURE."
        ),
        solution_plan=_todo(
            "Optional (delete the field if you give none): the steps that solve it, e.g. "
            '1. Call get_record with {"record_id": "R-1001"}.'
        ),
    )


def _records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON-lines file that read as objects (others are left alone)."""
    found = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        try:
            value = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            continue
        if isinstance(value, dict):
            found.append(value)
    return found


def _with_line(path: Path, record: BaseModel) -> str:
    """The text of a JSON-lines file with ``record`` added as its last line."""
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    if text and not text.endswith("\n"):
        text += "\n"
    line = json.dumps(record.model_dump(mode="json", exclude_none=True), ensure_ascii=False)
    return text + line + "\n"


FIELDS_TITLE = "# The fields of a dataset"
"""FIELDS.md's first line: a FIELDS.md that does not start with it is the user's own."""


def _write_all(files: dict[Path, str]) -> None:
    """Write each file whole, in order; on a failure put back what was there before.

    Raises:
        OSError: a file could not be written (a full disk, a read-only folder); every
            file is then as it was.
    """
    before: dict[Path, bytes | None] = {}
    try:
        for path, text in files.items():
            before[path] = path.read_bytes() if path.is_file() else None
            write_fresh(path, text)
    except OSError:
        for path, old in before.items():
            if old is None:
                path.unlink(missing_ok=True)
            else:
                try:
                    write_fresh(path, old)
                except OSError:
                    pass  # written whole or not at all: the new text, never half of one
        raise


def new_env(
    root: str | Path,
    name: str,
    *,
    industry: str,
    domain: str,
    scenario: str | None = None,
) -> NewEnv:
    """Write a new env and its first task into the dataset folder ``root`` (module doc).

    The folder is made if need be; the task gets the next free id; the scenario (by
    default the env's name in words) joins the pool unless it is there already.

    Raises:
        UsageError: a bad name, an env of that name already, a folder whose files
            cannot be read (``occubench env check`` says what is wrong with them), or
            one that cannot be written (full, read-only: then nothing is written).
    """
    if not ENV_NAME.fullmatch(name):
        raise UsageError(
            f"env name {name!r}: a lower-case letter, then up to 63 lower-case letters, "
            "digits or '_' (it names the config's file)"
        )
    scenario = scenario or name.replace("_", " ").title()
    for label, text in (("industry", industry), ("domain", domain), ("scenario", scenario)):
        if not _NAME_TEXT.fullmatch(text) or not text.strip():
            raise UsageError(f"--{label}: 1 to 120 characters, no control characters")
    root = Path(root)
    env_file = root / CONFIGS_DIR / f"{name}.json"
    if env_file.exists():
        raise UsageError(f"{env_file} exists already: choose another name")
    tasks_file, scenarios_file = root / TASKS_FILE, root / SCENARIOS_FILE
    ids = []
    if tasks_file.exists():
        check = check_dataset(root)
        unreadable = [i for i in check.issues if i.file == str(tasks_file) and i.field is None]
        if unreadable:
            raise UsageError(f"{unreadable[0]} (fix it first: occubench env check {root})")
        ids = [t.task_id for t in check.tasks]
    task_id = max(ids, default=0) + 1
    skeleton = skeleton_env(name)
    env = skeleton.model_dump(mode="json", exclude_none=True)
    twin_file = root / TWINS_DIR / f"{name}.py"
    if twin_file.exists():
        raise UsageError(f"{twin_file} exists already: choose another name")
    files = {
        env_file: json.dumps(env, indent=2) + "\n",
        twin_file: skeleton_twin(skeleton),
        tasks_file: _with_line(tasks_file, skeleton_task(task_id, scenario, name)),
    }
    known = _records(scenarios_file) if scenarios_file.is_file() else []
    if not any(r.get("task_scenario_name") == scenario for r in known):
        row = Scenario(category=industry, domain=domain, task_scenario_name=scenario)
        files[scenarios_file] = _with_line(scenarios_file, row)
    fields = root / FIELDS_FILE
    kept = fields.is_symlink() or (fields.exists() and not _ours(fields))
    if not kept:
        files[fields] = fields_markdown()
    env_file.parent.mkdir(parents=True, exist_ok=True)
    twin_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        _write_all(files)
    except OSError as e:
        raise UsageError(f"nothing was written to {root}: {e.strerror or e}") from e
    return NewEnv(
        root=root,
        env=name,
        task_id=task_id,
        scenario=scenario,
        written=list(files),
        kept=[fields] if kept else [],
    )


def _ours(fields: Path) -> bool:
    """Whether a FIELDS.md is one ``env new`` wrote (its first line), so it may be renewed."""
    try:
        with fields.open(encoding="utf-8", errors="replace") as f:
            return f.readline().rstrip("\n") == FIELDS_TITLE
    except OSError:
        return False


def _rows(model: type[BaseModel]) -> list[str]:
    rows = []
    for name, info in model.model_fields.items():
        need = "required" if info.is_required() else "optional"
        about = (info.description or "").replace("|", "\\|")
        rows.append(f"| `{name}` | {need} | {about} |")
    return rows


def _table(title: str, model: type[BaseModel], lead: str) -> list[str]:
    return [
        f"## {title}",
        "",
        lead,
        "",
        "| field | | what it holds |",
        "|---|---|---|",
        *_rows(model),
        "",
    ]


def fields_markdown() -> str:
    """FIELDS.md: every field of every file of a dataset, from the models' descriptions."""
    checks = (
        ToolCalledCheck,
        ToolNotCalledCheck,
        OrderCheck,
        AnswerContainsCheck,
        AnswerExcludesCheck,
        StateEqualsCheck,
    )
    lines = [
        FIELDS_TITLE,
        "",
        "Written by `occubench env new` from the loader's own models: what each file holds.",
        f"A string that begins with `{PLACEHOLDER}` is still to be written; "
        "`occubench env check DIR` lists every one left, with its file, line and field, and "
        "every other problem, before any model is called. `occubench env try` shows what "
        "the simulator makes of one call. Fields not listed here are kept as they are.",
        "",
        "```",
        f"{TASKS_FILE}        one task a line",
        f"{SCENARIOS_FILE}     one scenario a line",
        f"{CONFIGS_DIR}/ENV.json        one env config a file, named by the tasks' env_name",
        f"{TWINS_DIR}/ENV.py                       the env's twin (Python), loaded only when named",
        "```",
        "",
        f"## Twin ({TWINS_DIR}/ENV.py)",
        "",
        "The environment as code, the ground truth a simulator is measured against: a "
        "`Twin` subclass whose `environment` is the env's name, with one `@tool` method per "
        "tool. Each method gets the call's arguments (checked against the tool's "
        "`parameters` already), reads and changes `self.state` (a copy of "
        "`task_initial_state`), and returns `Answer(observation=..., free=[...])`: `free` "
        "lists the JSON Pointers of the observation's parts the config leaves open (not "
        "compared). Unknown ids get `self.error(message, code)`; override `error` when the "
        "config words its errors another way. `env new` writes a stub per tool answering "
        "its `example_output`; its docstring says how to fill it in. Twins are code: they "
        f"load only from a folder named on the command line (`--twins DIR/{TWINS_DIR}`), "
        "e.g. `occubench run --simulator-model occubench/twin --twins DIR/twins` or "
        "`occubench env try DIR --simulator-model occubench/twin --twins DIR/twins ...`.",
        "",
        *_table(
            "Task (a line of eval_benchmark_solvable.jsonl)",
            TaskRecord,
            "One instruction in one environment, with what grades it.",
        ),
        *_table(
            "Scenario (a line of task_scenario_all_pool.jsonl)",
            Scenario,
            "A professional role with its industry and domain, as tasks name it.",
        ),
        *_table(
            "Env config (world_model_configs/ENV.json)",
            EnvConfig,
            "What the simulator is told about the environment.",
        ),
        *_table(
            "Tool (an item of action_set_definitions)",
            ToolSpec,
            "One action the agent "
            "may call. `parameters` is a JSON Schema of an object; each property's "
            "`description` is what the agent reads about the argument.",
        ),
        *_table(
            "Reference plan (a task's reference_plan)",
            ReferencePlan,
            "Optional: the calls that solve the task.",
        ),
        *_table("Plan step (an item of steps)", PlanStep, "One call of the plan."),
        "## Checks (a task's checks)",
        "",
        "Optional: deterministic checks of the trajectory; a task with checks is graded by "
        "them (no judge). Each check is an object with a `kind`:",
        "",
    ]
    for check in checks:
        kind = check.model_fields["kind"].default
        others = [n for n in check.model_fields if n != "kind"]
        lines.append(f"- `{kind}` ({', '.join(f'`{n}`' for n in others)}): {check.__doc__}")
    return "\n".join(lines) + "\n"

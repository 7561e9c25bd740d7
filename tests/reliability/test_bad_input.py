"""Bad input: malformed datasets and tool-call arguments give clear errors, never crashes.

The loader must answer anything with a Dataset or a DatasetError whose issues name the
file (and the line and field where there is one); the CLI prints it and exits 2 without
a traceback; an agent's malformed tool call gets an error observation and the run goes on.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from typer.testing import CliRunner

from conftest import run_task
from occubench.agent import episode_in
from occubench.cli import app
from occubench.dataset import (
    CONFIGS_DIR,
    SCENARIOS_FILE,
    TASKS_FILE,
    DatasetError,
    EnvConfig,
    Scenario,
    TaskRecord,
    ToolSpec,
    check_tool,
    load_dataset,
    write_dataset,
)
from occubench.dataset._loader import MAX_DEPTH
from occubench.defaults import DEFAULT_MAX_DATASET_FILE_BYTES
from occubench.scripted import Reply
from occubench.testing._openai_server import ScriptedOpenAIServer

ENV = "env_records"
TASK = {
    "task_id": 1,
    "difficulty_level": 1,
    "task_scenario_name": "Records Clerk",
    "agent_instruction": "Store a note.",
    "env_name": ENV,
    "verification_plan": "A note was stored.",
}
CONFIG = {
    "environment_name": ENV,
    "world_model_system_prompt": "You simulate a records system.",
    "action_set_definitions": [
        {
            "name": "record",
            "description": "Store a note with free-form data.",
            "parameters": {
                "type": "object",
                "required": ["note"],
                "properties": {
                    "note": {"type": "string", "description": "The note."},
                    "data": {"type": "object", "description": "Free-form data."},
                },
            },
        }
    ],
    "task_initial_state": {"notes": []},
    "state_description": {"notes": "Stored notes."},
}
SCENARIO = {
    "category": "Public Service",
    "domain": "Records",
    "task_scenario_name": "Records Clerk",
}


def write(root: Path, tasks: bytes | None = None, config: bytes | None = None) -> Path:
    """A one-task dataset; ``tasks`` / ``config`` replace the files' bytes."""
    write_dataset(root, [TaskRecord(**TASK)], [EnvConfig(**CONFIG)], [Scenario(**SCENARIO)])
    if tasks is not None:
        (root / TASKS_FILE).write_bytes(tasks)
    if config is not None:
        (root / CONFIGS_DIR / f"{ENV}.json").write_bytes(config)
    return root


def load_or_error(root: Path) -> DatasetError | None:
    """The DatasetError of loading ``root`` (None if it loads); any other exception fails."""
    try:
        load_dataset(root)
    except DatasetError as e:
        assert e.issues and all(i.file.startswith(str(root)) for i in e.issues)
        return e
    return None


def nested(depth: int, leaf: object = "x") -> object:
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


def line(record: dict) -> bytes:
    return json.dumps(record).encode() + b"\n"


# -- hand cases: each names the place -------------------------------------------------

CONFIG_FILE = f"{CONFIGS_DIR}/{ENV}.json"
HAND_CASES = {
    # name: (tasks bytes, config bytes, file, line, field, message part)
    "binary tasks": (b"\xff\xfe\x00\x80garbage\n", None, TASKS_FILE, 1, None, "not UTF-8"),
    "binary second line": (line(TASK) + b"\x80\x81\n", None, TASKS_FILE, 2, None, "not UTF-8"),
    "binary config": (None, b'{\n"a": "\xff"}', CONFIG_FILE, 2, None, "not UTF-8"),
    "empty config": (None, b"", CONFIG_FILE, 1, None, "bad JSON"),
    "config is a JSON list": (None, b"[1, 2]", CONFIG_FILE, 1, None, "valid dictionary"),
    "task line is a list": (b"[1]\n", None, TASKS_FILE, 1, None, "JSON object"),
    "task not JSON": (b'{"task_id": 1,\n', None, TASKS_FILE, 1, None, "bad JSON"),
    "deep task line": (
        ("[" * 5000 + "]" * 5000).encode(),
        None,
        TASKS_FILE,
        1,
        None,
        f"nested more than {MAX_DEPTH}",
    ),
    "deep but parseable": (
        line({**TASK, "x": nested(200)}),
        None,
        TASKS_FILE,
        1,
        None,
        f"nested more than {MAX_DEPTH}",
    ),
    "deep config": (
        None,
        json.dumps({**CONFIG, "task_initial_state": nested(150)}).encode(),
        CONFIG_FILE,
        None,
        None,
        f"nested more than {MAX_DEPTH}",
    ),
    "huge integer": (
        b'{"task_id": ' + b"9" * 5000 + b"}\n",
        None,
        TASKS_FILE,
        1,
        None,
        "integer string conversion",
    ),
    "NaN id": (
        line({**TASK}).replace(b'"task_id": 1', b'"task_id": NaN'),
        None,
        TASKS_FILE,
        1,
        "task_id",
        "valid integer",
    ),
    "boolean id": (line({**TASK, "task_id": True}), None, TASKS_FILE, 1, "task_id", "integer"),
    "string id": (line({**TASK, "task_id": "7"}), None, TASKS_FILE, 1, "task_id", "integer"),
    "float id": (line({**TASK, "task_id": 7.0}), None, TASKS_FILE, 1, "task_id", "integer"),
    "duplicate id": (
        line(TASK) + line({**TASK, "agent_instruction": "Another."}) + line(TASK),
        None,
        TASKS_FILE,
        2,
        "task_id",
        "duplicate task_id 1: lines 1 and 2",
    ),
    "wrong types": (
        line({**TASK, "difficulty_level": "hard"}),
        None,
        TASKS_FILE,
        1,
        "difficulty_level",
        "integer",
    ),
    "missing field": (
        line({k: v for k, v in TASK.items() if k != "env_name"}),
        None,
        TASKS_FILE,
        1,
        "env_name",
        "required",
    ),
    "lone surrogate": (
        line(TASK).replace(b"Store", b"\\ud800Store"),
        None,
        TASKS_FILE,
        1,
        "agent_instruction",
        "unicode",
    ),
    "invalid JSON Schema": (
        None,
        json.dumps(
            {
                **CONFIG,
                "action_set_definitions": [
                    {
                        **CONFIG["action_set_definitions"][0],
                        "parameters": {"type": "object", "required": "note"},
                    }
                ],
            }
        ).encode(),
        CONFIG_FILE,
        1,
        "action_set_definitions[0].parameters.required",
        "invalid JSON Schema",
    ),
    "unknown JSON type": (
        None,
        json.dumps(
            {
                **CONFIG,
                "action_set_definitions": [
                    {
                        **CONFIG["action_set_definitions"][0],
                        "parameters": {"type": "object", "properties": {"n": {"type": "int"}}},
                    }
                ],
            }
        ).encode(),
        CONFIG_FILE,
        1,
        "action_set_definitions[0].parameters.properties.n.type",
        "JSON Schema",
    ),
    "env outside the folder": (
        line({**TASK, "env_name": "../../etc/passwd"}),
        None,
        f"{CONFIGS_DIR}/../../etc/passwd.json",
        None,
        "env_name",
        "must be a file name",
    ),
    "missing config": (
        line({**TASK, "env_name": "env_absent"}),
        None,
        f"{CONFIGS_DIR}/env_absent.json",
        None,
        None,
        "not found",
    ),
}


@pytest.mark.parametrize("case", list(HAND_CASES), ids=list(HAND_CASES))
def test_hand_cases_name_the_place(case, tmp_path):
    tasks, config, file, line_no, field, part = HAND_CASES[case]
    error = load_or_error(write(tmp_path, tasks, config))
    assert error is not None
    issue = next(i for i in error.issues if i.file == str(tmp_path / file))
    assert (issue.line, issue.field) == (line_no, field) and part in issue.message, issue


def test_missing_files_are_each_named(tmp_path):
    write(tmp_path)
    (tmp_path / TASKS_FILE).unlink()
    (tmp_path / SCENARIOS_FILE).unlink()
    error = load_or_error(tmp_path)
    assert {(Path(i.file).name, i.message) for i in error.issues} == {
        (TASKS_FILE, "file not found"),
        (SCENARIOS_FILE, "file not found"),
    }
    assert load_or_error(tmp_path / "absent").issues[0].message == "dataset folder not found"


def test_a_config_linked_outside_the_folder_is_never_read(tmp_path):
    secret = tmp_path / "elsewhere" / "secret.json"
    secret.parent.mkdir()
    secret.write_text(json.dumps(CONFIG))  # a valid config: only where it lives is wrong
    root = write(tmp_path / "ds")
    config = root / CONFIG_FILE
    config.unlink()
    config.symlink_to(secret)
    error = load_or_error(root)
    (issue,) = error.issues
    assert (issue.file, issue.line, issue.field) == (str(root / TASKS_FILE), 1, "env_name")
    assert str(secret) in issue.message and "outside the dataset folder" in issue.message


def test_links_inside_the_folder_are_followed(tmp_path):
    root = write(tmp_path / "ds")
    config = root / CONFIG_FILE
    kept = root / "shared" / "records.json"
    kept.parent.mkdir()
    config.rename(kept)
    config.symlink_to(Path("..") / "shared" / "records.json")
    (tmp_path / "link").symlink_to(root)  # the folder itself through a link
    assert [t.task_id for t in load_dataset(tmp_path / "link").tasks] == [1]


def test_a_tasks_file_linked_outside_the_folder_is_refused(tmp_path):
    root = write(tmp_path / "ds")
    outside = tmp_path / "tasks.jsonl"
    (root / TASKS_FILE).rename(outside)
    (root / TASKS_FILE).symlink_to(outside)
    (issue,) = load_or_error(root).issues
    assert issue.file == str(root / TASKS_FILE) and "outside the dataset folder" in issue.message


def test_files_over_the_size_limit_are_not_read(tmp_path):
    root = write(tmp_path / "ds")
    size = (root / TASKS_FILE).stat().st_size
    with pytest.raises(DatasetError) as refused:
        load_dataset(root, max_file_bytes=size - 1)
    (issue,) = refused.value.issues
    assert issue.file == str(root / TASKS_FILE)
    assert f"{size} bytes, more than the limit of {size - 1}" in issue.message
    config_size = (root / CONFIG_FILE).stat().st_size
    with pytest.raises(DatasetError) as refused:
        load_dataset(root, max_file_bytes=max(size, config_size - 1))
    (issue,) = refused.value.issues
    assert (issue.file, issue.line, issue.field) == (str(root / TASKS_FILE), 1, "env_name")
    assert str(root / CONFIG_FILE) in issue.message and "more than the limit" in issue.message


def test_unicode_round_trips(tmp_path):
    """Line separators inside JSON strings (U+2028, U+0085, ...) do not split a line."""
    odd = "Note\u2028that\u2029this\x85and\x0c\x1c this: 😀 ñ 中文 \u202e"
    root = tmp_path / "ds"
    write_dataset(
        root,
        [TaskRecord(**{**TASK, "agent_instruction": odd})],
        [EnvConfig(**CONFIG)],
        [Scenario(**SCENARIO)],
    )
    assert load_dataset(root).tasks[0].agent_instruction == odd


def test_huge_strings_load(tmp_path):
    big = "x" * 5_000_000
    root = write(tmp_path, tasks=line({**TASK, "agent_instruction": big}))
    assert load_dataset(root).tasks[0].agent_instruction == big


def test_tool_names_providers_refuse_are_warned(tmp_path):
    tool = {**CONFIG["action_set_definitions"][0], "name": "store note\x1b[31m"}
    root = write(tmp_path, config=json.dumps({**CONFIG, "action_set_definitions": [tool]}).encode())
    warnings = load_dataset(root).warnings
    (warning,) = [w for w in warnings if w.field == "action_set_definitions[0].name"]
    assert "refused by provider APIs" in warning.message and "\\x1b" in warning.message


# -- fuzzing ---------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
FUZZ = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)


@FUZZ
@given(st.binary(max_size=300))
def test_fuzz_tasks_file_bytes(data):
    with tempfile.TemporaryDirectory() as folder:
        error = load_or_error(write(Path(folder), tasks=data))
        if error is not None:
            assert all(i.line is not None for i in error.issues if i.file.endswith(TASKS_FILE))


@FUZZ
@given(st.binary(max_size=300) | json_values.map(lambda v: json.dumps(v).encode()))
def test_fuzz_config_file(data):
    with tempfile.TemporaryDirectory() as folder:
        load_or_error(write(Path(folder), config=data))


@FUZZ
@given(st.sampled_from(sorted(TASK)), json_values)
def test_fuzz_task_fields(name, value):
    with tempfile.TemporaryDirectory() as folder:
        error = load_or_error(write(Path(folder), tasks=line({**TASK, name: value})))
        if error is not None:
            assert any(i.line == 1 and i.field == name for i in error.issues) or any(
                i.file.endswith(".json") for i in error.issues
            )  # env_name: its config is named


@FUZZ
@given(st.sampled_from(["name", "description", "parameters", "example_output"]), json_values)
def test_fuzz_tool_fields(name, value):
    tool = {**CONFIG["action_set_definitions"][0], name: value}
    with tempfile.TemporaryDirectory() as folder:
        root = write(
            Path(folder),
            config=json.dumps(
                {**CONFIG, "action_set_definitions": [tool]}, allow_nan=True
            ).encode(),
        )
        error = load_or_error(root)
        if error is not None:
            assert all(
                i.field and i.field.startswith("action_set_definitions[0]") for i in error.issues
            ), error.issues


@FUZZ
@given(json_values)
def test_fuzz_tool_schemas_never_raise(schema):
    if isinstance(schema, dict):
        errors, _ = check_tool(ToolSpec(name="t", description="d", parameters=schema))
        assert all(field.startswith("parameters") for field, _ in errors)


# -- the CLI ---------------------------------------------------------------------------

MODELS = [
    "--agent-model",
    "occubench/schema-agent",
    "--simulator-model",
    "occubench/echo-simulator",
]


@pytest.mark.parametrize(
    "tasks, config, args, expected",
    [
        (b"\x00\xff\xfe garbage", None, [], "not UTF-8"),
        (None, b"[1, 2]", [], "valid dictionary"),
        (b"", None, [], "matches the selection"),
        (None, None, ["--tasks", "1,x"], "task_ids.1: Input should be a valid integer"),
        (None, None, ["--tasks", "77"], "unknown task ids"),
        (None, None, ["--env-mode", "\x1b]0;pwned\x07[/]"], "env_mode"),
        (None, None, ["--categories", "[bold]\x1b[2J[/]"], "unknown industries"),
    ],
    ids=[
        "binary",
        "json-list-config",
        "empty",
        "bad-id",
        "unknown-id",
        "markup-mode",
        "markup-category",
    ],
)
def test_cli_reports_bad_input_and_exits_2(tasks, config, args, expected, tmp_path):
    root = write(tmp_path / "ds", tasks, config)
    result = CliRunner().invoke(
        app, ["run", *MODELS, "--dataset", str(root), "--workers", "1", *args], terminal_width=200
    )
    assert result.exit_code == 2, result.output
    assert expected in result.output and "Traceback" not in result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert not isinstance(result.exception, Exception) or isinstance(result.exception, SystemExit)


def test_cli_refuses_a_huge_tasks_file_with_a_message(tmp_path):
    """A tasks file larger than the default limit (sparse: nothing is written) is one line."""
    root = write(tmp_path / "ds")
    with (root / TASKS_FILE).open("r+b") as tasks:
        tasks.truncate(DEFAULT_MAX_DATASET_FILE_BYTES + 1)
    result = CliRunner().invoke(
        app, ["run", *MODELS, "--dataset", str(root), "--workers", "1"], terminal_width=300
    )
    assert result.exit_code == 2, result.output
    assert "more than the limit of" in result.output and TASKS_FILE in result.output
    assert "Traceback" not in result.output and "MemoryError" not in result.output


@pytest.mark.parametrize(
    "corner", ["boolean id", "string id", "duplicate id"], ids=["bool", "str", "duplicate"]
)
def test_cli_names_the_line_of_each_id_corner(corner, tmp_path):
    tasks, _, _, line_no, field, part = HAND_CASES[corner]
    root = write(tmp_path / "ds", tasks)
    result = CliRunner().invoke(
        app, ["run", *MODELS, "--dataset", str(root), "--workers", "1"], terminal_width=300
    )
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    assert f"{TASKS_FILE}:{line_no} [{field}]" in result.output and part in result.output


def test_cli_list_reports_bad_input(tmp_path):
    root = write(tmp_path / "ds", config=b"[]")
    result = CliRunner().invoke(app, ["list", "--dataset", str(root)], terminal_width=200)
    assert result.exit_code == 2 and "Dataset error" in result.output
    assert "Traceback" not in result.output


# -- malformed tool calls from the agent ----------------------------------------------

BAD_CALLS = {
    "wrong type": {"note": 5},
    "unknown field": {"note": "ok", "bogus": 1},
    "deep, allowed field": {"note": "ok", "data": nested(150)},
    "deep, wrong type": {"note": nested(200)},
}


def tool_call(i: int, arguments: dict, parse_error: str | None = None) -> ModelOutput:
    output = ModelOutput.for_tool_call("mockllm/model", "record", arguments, tool_call_id=f"c{i}")
    output.message.tool_calls[0].parse_error = parse_error
    output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    return output


def test_malformed_tool_calls_get_error_observations(tmp_path):
    answer = ModelOutput.from_content("mockllm/model", "Done.")
    answer.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
    outputs = [tool_call(i, args) for i, args in enumerate(BAD_CALLS.values())]
    outputs += [
        tool_call(8, {"note": "é" * 200_000}),  # huge, but well-formed: simulated
        tool_call(9, {}, parse_error="Expecting value: line 1 column 1 (char 0)"),
        answer,
    ]
    agent = get_model("mockllm/model", custom_outputs=iter(outputs))  # iter: not serialised
    log = run_task(tmp_path, agent=agent, dataset=str(write(tmp_path / "ds")))
    (sample,) = log.samples
    assert log.status == "success" and sample.error is None
    results = [m for m in sample.messages if m.role == "tool"]
    assert len(results) == len(BAD_CALLS) + 2
    assert all(m.error is not None and m.error.type == "parsing" for m in results[: len(BAD_CALLS)])
    assert results[len(BAD_CALLS)].error is None  # the huge note reached the simulator
    assert results[-1].error.type == "parsing"
    assert episode_in(sample.store).tool_calls == 1  # only the well-formed call was simulated
    assert sample.scores["occubench_scorer"].value in ("C", "I")


def test_too_deep_arguments_over_http_are_a_parse_error(tmp_path, monkeypatch):
    """Over the OpenAI API arguments arrive as text, parsed with a depth limit."""

    def deep_agent(messages, tools):
        if any(m.role == "tool" for m in messages):
            return Reply(content="Done.")
        return Reply(tool_calls=[("record", {"note": "ok", "data": nested(400)})])

    with ScriptedOpenAIServer(behaviours={"deep-agent": deep_agent}) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")
        log = run_task(
            tmp_path, agent="openai-api/local/deep-agent", dataset=str(write(tmp_path / "ds"))
        )
    (sample,) = log.samples
    assert sample.error is None
    (result,) = [m for m in sample.messages if m.role == "tool"]
    assert result.error.type == "parsing" and "nesting depth" in result.error.message

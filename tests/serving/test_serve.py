"""``occubench serve`` driven by the MCP SDK's own client, over stdio and over HTTP.

A reference-suite task in E2: the client lists the tools, sends bad calls (refused with
tool errors), works the task with the careful reference policy (a degraded read is
seen), submits and gets the verdict; the session's .eval log is then read back by
``occubench report``.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import anyio
import pytest
from inspect_ai.model import ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCallError
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from occubench.agent import episode_in
from occubench.analysis import log_files, read_runs
from occubench.cli import _common, app
from occubench.scripted import BEHAVIOURS

TASK = 1001
ENV_TOOLS = ["get_patient_vitals", "list_open_beds", "get_triage_protocol"]


@pytest.fixture(autouse=True)
def wide_console():
    for console in (_common.console, _common.err_console):
        console.width = 200


def serve_args(log_dir: Path, *extra: str) -> list[str]:
    return [
        "-m",
        "occubench",
        "serve",
        "--dataset",
        "reference",
        "--task",
        str(TASK),
        "--env-mode",
        "E2",
        "--with-plan",
        "--protocol",
        "occubench",
        "--simulator-model",
        "occubench/canned",
        "--log-dir",
        str(log_dir),
        "--linger",
        "0.2",
        *extra,
    ]


def text_of(result) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


async def work_the_task(session: ClientSession, *, submit: bool = True) -> dict:
    """List, refuse, call, submit; what the client saw."""
    await session.initialize()
    listed = await session.list_tools()
    prompt = await session.get_prompt("task")
    seen: dict = {
        "tools": [t.name for t in listed.tools],
        "prompt": prompt.messages[0].content.text,
    }
    unknown = await session.call_tool("no_such_tool", {})
    wrong = await session.call_tool("get_patient_vitals", {"patient_id": 5})
    extra = await session.call_tool("get_patient_vitals", {"patient_id": "P-2231", "x": 1})
    seen["refused"] = [(r.is_error, text_of(r)) for r in (unknown, wrong, extra)]
    messages = [ChatMessageUser(content=seen["prompt"])]
    seen["observations"] = []
    while True:
        reply = BEHAVIOURS["careful"](messages, [])
        if not reply.tool_calls:
            break
        (tool, arguments), *_ = reply.tool_calls
        result = await session.call_tool(tool, arguments)
        seen["observations"].append((tool, text_of(result)))
        error = ToolCallError("parsing", text_of(result)) if result.is_error else None
        messages.append(ChatMessageTool(content=text_of(result), function=tool, error=error))
    seen["answer"] = reply.content
    if submit:
        verdict = await session.call_tool("submit_answer", {"answer": reply.content})
        seen["verdict"] = json.loads(text_of(verdict))
        after = await session.call_tool("get_patient_vitals", {"patient_id": "P-2231"})
        seen["after"] = (after.is_error, text_of(after))
    return seen


def the_log(log_dir: Path):
    logs = log_files([log_dir])
    assert len(logs) == 1, logs
    rows = read_runs(logs)
    assert len(rows) == 1
    return logs[0], rows[0]


def check_session(seen: dict, log_dir: Path) -> None:
    assert seen["tools"] == [*ENV_TOOLS, "submit_answer"]
    assert "Patient P-2231" in seen["prompt"] and "2025-06-16" in seen["prompt"]
    assert [error for error, _ in seen["refused"]] == [True, True, True]
    assert "unknown tool" in seen["refused"][0][1]
    assert "is not of type 'string'" in seen["refused"][1][1]
    assert "Additional properties" in seen["refused"][2][1]
    assert seen["verdict"]["verdict"] == "passed" and seen["verdict"]["explanation"] == "checks 4/4"
    assert seen["after"][0] and "ended" in seen["after"][1]

    log, row = the_log(log_dir)
    assert row.passed is True and row.error is None and row.env_mode == "E2"
    assert row.agent_model == "MCP client" and row.stop_reason == "answered"
    applied = [f for f in row.faults if f["applied"]]
    assert applied, "E2 degrades at least one read of this task"
    # the client saw exactly the degraded copy the fault log records
    seen_texts = [json.loads(text) for _, text in seen["observations"]]
    for fault in applied:
        assert seen_texts[fault["call_index"]] == fault["seen_by_agent"]
    from inspect_ai.log import read_eval_log

    sample = read_eval_log(log).samples[0]
    episode = episode_in(sample.store)
    assert len(episode.steps) == row.tool_calls == len(seen["observations"])  # refusals not sent
    assert sample.store["ServedSession:answer_source"] == "submitted"

    report = CliRunner().invoke(app, ["report", str(log_dir)], terminal_width=200)
    assert report.exit_code == 0, report.output
    assert "MCP client" in report.output and "100.0" in report.output


def test_serve_over_stdio(tmp_path, caplog):
    async def client() -> dict:
        params = StdioServerParameters(
            command=sys.executable, args=serve_args(tmp_path), env=dict(os.environ)
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await work_the_task(session)

    seen = anyio.run(client)
    check_session(seen, tmp_path)
    # stdout carried protocol messages only (Inspect's hooks banner once broke that)
    assert not [r for r in caplog.records if "Failed to parse JSONRPC" in r.getMessage()]


async def http_server(tmp_path: Path, *extra: str):
    process = await anyio.open_process(
        [sys.executable, *serve_args(tmp_path, "--transport", "http", "--port", "0", *extra)],
        stderr=-1,
    )
    printed = b""
    with anyio.fail_after(60):
        while b"/mcp\n" not in printed:
            printed += await process.stderr.receive()
    url = re.search(rb"at (http://127\.0\.0\.1:\d+/mcp)", printed)
    assert url, printed
    return process, url.group(1).decode()


def test_serve_over_http_on_localhost(tmp_path):
    async def client() -> dict:
        process, url = await http_server(tmp_path)
        async with process:
            async with streamable_http_client(url) as (read, write):
                async with ClientSession(read, write) as session:
                    seen = await work_the_task(session)
            with anyio.fail_after(60):
                assert await process.wait() == 0
        return seen

    seen = anyio.run(client)
    check_session(seen, tmp_path)


def test_a_session_without_submission_is_graded_on_what_it_did(tmp_path):
    async def client() -> dict:
        params = StdioServerParameters(
            command=sys.executable, args=serve_args(tmp_path), env=dict(os.environ)
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                return await work_the_task(session, submit=False)

    anyio.run(client)
    _, row = the_log(tmp_path)
    assert row.error is None and row.passed is False  # no answer: the answer check fails
    assert row.stop_reason == "not_submitted" and row.tool_calls > 0
    assert row.checks_passed == 3 and row.checks_total == 4  # the calls were made


def test_a_session_without_submission_can_count_as_an_error(tmp_path):
    async def client() -> None:
        params = StdioServerParameters(
            command=sys.executable,
            args=serve_args(tmp_path, "--unsubmitted", "error"),
            env=dict(os.environ),
        )
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await session.call_tool("get_patient_vitals", {"patient_id": "P-2231"})

    anyio.run(client)
    _, row = the_log(tmp_path)
    assert row.passed is None and row.error_source == "agent"
    assert "without a submitted answer" in (row.error or "")

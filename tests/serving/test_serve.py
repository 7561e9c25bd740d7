"""``occubench serve`` driven by the MCP SDK's own client, over stdio and over HTTP.

A reference-suite task in E2: the client lists the tools, sends bad calls (refused with
tool errors), works the task with the careful reference policy (a degraded read is
seen), submits and gets the verdict; the session's .eval log is then read back by
``occubench report``. Each attack on the endpoint is played against the real server: no
token, a foreign Host or Origin, an oversized or too-deep message.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import zipfile
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import httpx2
import pytest
from inspect_ai.model import ChatMessageTool, ChatMessageUser
from inspect_ai.tool import ToolCallError
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from occubench.agent import episode_in
from occubench.cli import _common, app
from occubench.results import log_files, read_runs
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
    applied = [f for f in row.faults if f.applied]
    assert applied, "E2 degrades at least one read of this task"
    # the client saw exactly the degraded copy the fault log records
    seen_texts = [json.loads(text) for _, text in seen["observations"]]
    for fault in applied:
        assert seen_texts[fault.call_index] == fault.seen_by_agent
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


ACCEPT = "application/json, text/event-stream"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
HUGE = 20_000_000
"""Bytes of the oversized message (a tool call's argument)."""
DEEP = 100_000
"""Nesting of the too-deep message."""


def rpc(id: int, method: str, params: dict | None = None) -> bytes:
    return json.dumps(
        {"jsonrpc": "2.0", "id": id, "method": method, "params": params or {}}
    ).encode()


def huge_call(id: int) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":'.encode()
    return (
        head + b'{"name":"get_patient_vitals","arguments":{"patient_id":"' + b"A" * HUGE + b'"}}}'
    )


def deep_call(id: int) -> bytes:
    head = f'{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":'.encode()
    nested = b"[" * DEEP + b"]" * DEEP
    return head + b'{"name":"get_patient_vitals","arguments":{"patient_id":' + nested + b"}}}"


def http_server(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, str, str, str]:
    """``occubench serve`` over HTTP; its process, URL, token and what it printed first."""
    process = subprocess.Popen(
        [sys.executable, *serve_args(tmp_path, "--transport", "http", "--port", "0", *extra)],
        stderr=subprocess.PIPE,
    )
    printed = b""
    while b"--- task" not in printed:
        chunk = process.stderr.read1(65536)
        assert chunk, printed.decode()
        printed += chunk
    threading.Thread(target=process.stderr.read, daemon=True).start()  # never blocks it
    url = re.search(rb"at (http://\S+/mcp)\n", printed)
    token = re.search(rb"token: (\S+) ", printed)
    assert url and token, printed
    return process, url.group(1).decode(), token.group(1).decode(), printed.decode()


def answers(reply: httpx.Response) -> list[dict]:
    """The JSON-RPC messages of an HTTP reply (JSON, or an event stream)."""
    if reply.headers.get("content-type", "").startswith("text/event-stream"):
        lines = reply.text.splitlines()
        return [
            json.loads(line[5:]) for line in lines if line.startswith("data:") and line[5:].strip()
        ]
    return [reply.json()]


def test_serve_over_http_on_localhost(tmp_path):
    process, url, token, _ = http_server(tmp_path)
    task_text = "Patient P-2231"
    # another local process that knows the port, not the token: 401, nothing of the task
    with httpx.Client(timeout=60) as http:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        refused = [
            http.post(url, content=json.dumps(INITIALIZE), headers=headers),
            http.post(
                url,
                content=rpc(
                    2, "tools/call", {"name": "submit_answer", "arguments": {"answer": "x"}}
                ),
                headers=headers,
            ),
            http.post(
                url,
                content=json.dumps(INITIALIZE),
                headers={**headers, "Authorization": "Bearer " + "x" * len(token)},
            ),
            http.get(url, headers=headers),
        ]
    assert [r.status_code for r in refused] == [401, 401, 401, 401]
    assert not [r for r in refused if task_text in r.text or "tools" in r.text]

    async def client() -> dict:
        auth = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300)
        )
        async with auth, streamable_http_client(url, http_client=auth) as (read, write):
            async with ClientSession(read, write) as session:
                return await work_the_task(session)

    try:
        seen = anyio.run(client)
        assert process.wait() == 0
    finally:
        process.kill()
    check_session(seen, tmp_path)  # passed: the intruder's submission never happened
    log, _ = the_log(tmp_path)
    with zipfile.ZipFile(log.removeprefix("file://")) as archive:  # the token reached no log
        for member in archive.namelist():
            assert token.encode() not in archive.read(member), member


def test_an_exposed_http_server_warns_and_answers_only_its_host_names(tmp_path):
    process, url, token, printed = http_server(
        tmp_path, "--host", "0.0.0.0", "--allowed-host", "occubench.test"
    )
    try:
        assert "Warning: serving on 0.0.0.0" in printed
        port = urlsplit(url).port
        endpoint = f"http://127.0.0.1:{port}/mcp"
        auth = {
            "Authorization": f"Bearer {token}",
            "Accept": ACCEPT,
            "Content-Type": "application/json",
        }
        init = json.dumps(INITIALIZE)
        with httpx.Client(timeout=60) as http:
            foreign = http.post(
                endpoint, content=init, headers={**auth, "Host": f"evil.test:{port}"}
            )
            assert foreign.status_code == 421 and "Patient" not in foreign.text
            page = http.post(endpoint, content=init, headers={**auth, "Origin": "http://evil.test"})
            assert page.status_code == 403 and "Patient" not in page.text
            named = http.post(
                endpoint, content=init, headers={**auth, "Host": f"occubench.test:{port}"}
            )
            assert named.status_code == 200, named.text
            assert "Patient P-2231" in answers(named)[0]["result"]["instructions"]
            auth |= {
                "mcp-session-id": named.headers["mcp-session-id"],
                "mcp-protocol-version": "2025-06-18",
            }
            assert (
                http.post(endpoint, content=json.dumps(INITIALIZED), headers=auth).status_code
                == 202
            )
            # an oversized and a too-deep message: a JSON-RPC error each, the session goes on
            large = http.post(endpoint, content=huge_call(7), headers=auth)
            deep = http.post(endpoint, content=deep_call(8), headers=auth)
            listed = http.post(endpoint, content=rpc(9, "tools/list"), headers=auth)
            submitted = http.post(
                endpoint,
                content=rpc(
                    10, "tools/call", {"name": "submit_answer", "arguments": {"answer": "x"}}
                ),
                headers=auth,
            )
        assert (large.status_code, deep.status_code, listed.status_code) == (413, 400, 200)
        (too_large,), (too_deep,), (tools,), (verdict,) = map(
            answers, (large, deep, listed, submitted)
        )
        assert too_large["id"] == 7 and "longer than 4194304 bytes" in too_large["error"]["message"]
        assert too_deep["id"] == 8 and "deeper than 102 levels" in too_deep["error"]["message"]
        assert too_large["error"]["code"] == too_deep["error"]["code"] == -32600
        assert [t["name"] for t in tools["result"]["tools"]] == [*ENV_TOOLS, "submit_answer"]
        assert json.loads(verdict["result"]["content"][0]["text"])["verdict"] == "failed"
        assert process.wait() == 0
    finally:
        process.kill()
    _, row = the_log(tmp_path)
    assert row.error is None and row.tool_calls == 0  # the refused calls reached nothing


def test_stdio_answers_an_oversized_or_too_deep_message_and_goes_on(tmp_path):
    with (tmp_path / "stderr").open("wb") as stderr:
        process = subprocess.Popen(
            [sys.executable, *serve_args(tmp_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
        )
    assert process.stdin and process.stdout

    def send(*lines: bytes) -> None:
        for line in lines:
            process.stdin.write(line + b"\n")
        process.stdin.flush()

    def reply() -> dict:
        line = process.stdout.readline()
        assert line, "the session ended"
        return json.loads(line)

    try:
        send(json.dumps(INITIALIZE).encode())
        assert "Patient P-2231" in reply()["result"]["instructions"]
        send(json.dumps(INITIALIZED).encode())
        # each refusal is written before the next line is read: it comes first
        send(huge_call(7), rpc(8, "tools/list"))
        too_large, listed = reply(), reply()
        send(deep_call(9), rpc(10, "tools/list"))
        too_deep, listed_again = reply(), reply()
        send(rpc(11, "tools/call", {"name": "submit_answer", "arguments": {"answer": "x"}}))
        verdict = reply()
        process.stdin.close()
        assert process.wait() == 0
    finally:
        process.kill()
    assert too_large["id"] == 7 and "longer than 4194304 bytes" in too_large["error"]["message"]
    assert too_deep["id"] == 9 and "deeper than 102 levels" in too_deep["error"]["message"]
    assert (listed["id"], listed_again["id"]) == (8, 10)
    assert [t["name"] for t in listed["result"]["tools"]] == [*ENV_TOOLS, "submit_answer"]
    assert verdict["id"] == 11 and "verdict" in verdict["result"]["content"][0]["text"]
    _, row = the_log(tmp_path)
    assert row.error is None and row.tool_calls == 0


def test_a_bad_serve_token_is_one_clear_message(monkeypatch):
    monkeypatch.setenv("OCCUBENCH_SERVE_TOKEN", "not a token!")
    args = serve_args(Path("unused"), "--transport", "http")[2:]
    result = CliRunner().invoke(app, args, terminal_width=200)
    assert result.exit_code == 2, result.output
    assert "OCCUBENCH_SERVE_TOKEN must be 16 to 512" in result.output
    assert "not a token!" not in result.output


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


def test_a_served_session_records_a_world_and_a_second_one_replays_it(tmp_path):
    world = str(tmp_path / "world")

    def session(log_dir: Path, *extra: str) -> None:
        async def client() -> None:
            params = StdioServerParameters(
                command=sys.executable,
                args=serve_args(log_dir, "--world", world, *extra),
                env=dict(os.environ),
            )
            async with stdio_client(params) as (read, write):
                async with ClientSession(read, write) as session:
                    await work_the_task(session)

        anyio.run(client)

    session(tmp_path / "first")
    session(tmp_path / "second", "--world-mode", "replay")
    _, first = the_log(tmp_path / "first")
    _, second = the_log(tmp_path / "second")
    assert first.simulator_calls > 0 and first.world_hits == 0
    assert second.simulator_calls == 0 and second.world_hits == first.simulator_calls
    assert second.error is None and second.passed == first.passed


def test_serve_refuses_a_world_it_cannot_replay(tmp_path):
    args = serve_args(tmp_path, "--world", str(tmp_path / "none"), "--world-mode", "replay")
    result = CliRunner().invoke(app, args[2:], terminal_width=200)
    assert result.exit_code == 2, result.output
    assert "no world at" in result.output and "Traceback" not in result.output

"""``--agent-command``: any agent program, once per sample, against that sample's MCP endpoint.

For each sample the environment is opened (faults planned as for any agent) and served
over streamable HTTP on 127.0.0.1 (a free port) that answers only requests carrying
the sample's token (``http_app``); the command is run with the endpoint, the token and
the task (placeholders and environment variables, see ``ProgramInputs``); the
program works through the MCP tools and submits with the submit tool. Its answer is
the submitted one, else its last non-empty line of standard output. It is stopped at
``agent_time_limit``, and a few seconds after it submitted; when it ends, it and every
process it started are stopped, those that left its process group included
(``ProgramProcesses``), and its output is read a bounded time more.

Outcomes: submitted, or exited 0 -> graded as any sample; crashed (non-zero exit) or
stopped at the limit without an answer -> the sample is an error (``AgentProgramError``,
counted apart, retried like any errored sample).

With an agent model (``--agent-model``), the program also gets base URLs served
through Inspect's model layer (``bridge_routes``), for OpenAI's chat completions and
Responses APIs and Anthropic's Messages API: what it asks there is answered by that
model, and the tokens and cost land in the log (each generation an Inspect model call,
and its wire and tokens in the sample's store, ``ServedSession.calls``). Without one,
the program's own model usage is not counted.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
import tempfile
import time
from collections import deque
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

import anyio
from inspect_ai.agent import agent_bridge
from inspect_ai.model import ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, solver

from occubench.agent import StopReason
from occubench.config import NO_AGENT_MODEL, ResolvedRun
from occubench.defaults import DEFAULT_AGENT_EXIT_GRACE, DEFAULT_ALLOWED_HOSTS
from occubench.env import EnvEpisode
from occubench.errors import UsageError
from occubench.redaction import redact_strings
from occubench.serving._access import Access, http_app
from occubench.serving._bridge import BRIDGED_MODEL, bridge_routes
from occubench.serving._mcp import mcp_server
from occubench.serving._processes import fits_in_environment, start_program
from occubench.serving._record import (
    AgentProgramError,
    AnswerSource,
    BridgedCall,
    ProgramRun,
    ServedSession,
)
from occubench.serving._session import ServedEpisode
from occubench.serving._transports import http_endpoint

LOCALHOST = "127.0.0.1"
TAIL_BYTES = 8192
"""Bytes kept of each of a program's output streams (the end)."""
INSTRUCTION_VARIABLE = "OCCUBENCH_INSTRUCTION"
"""Holds the task's text, when a variable can; ``OCCUBENCH_INSTRUCTION_FILE`` always names
a file that holds it."""


CLIENT_VARIABLES = {
    "OPENAI_BASE_URL": "openai_base_url",
    "OCCUBENCH_OPENAI_BASE_URL": "openai_base_url",
    "OPENAI_API_KEY": "token",
    "ANTHROPIC_BASE_URL": "anthropic_base_url",
    "OCCUBENCH_ANTHROPIC_BASE_URL": "anthropic_base_url",
    "ANTHROPIC_AUTH_TOKEN": "token",
    "ANTHROPIC_API_KEY": "token",
}
"""Variables set for a program with an agent model, and the placeholder each holds.

The names the SDKs read (openai SDK: ``_client.py``, ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY``; anthropic SDK: ``_client.py``, ``ANTHROPIC_BASE_URL``,
``ANTHROPIC_API_KEY`` sent as ``x-api-key``, ``ANTHROPIC_AUTH_TOKEN`` sent as
``Authorization: Bearer``), which Claude Code and Codex read too."""


class ProgramInputs:
    """What an agent program is given: placeholders in its command, environment variables.

    Placeholders (replaced in each word of the command, which is split like a shell's):
    ``{url}`` the MCP endpoint, ``{token}`` the sample's token (sent as
    ``Authorization: Bearer <token>``), ``{instruction_file}`` a file with the task
    (system prompt and instruction), ``{task_id}``, ``{submit_tool}``,
    ``{openai_base_url}`` and ``{anthropic_base_url}`` (empty without an agent model).
    Environment:
    ``OCCUBENCH_MCP_URL``, ``OCCUBENCH_MCP_TOKEN``, ``OCCUBENCH_INSTRUCTION_FILE``,
    ``OCCUBENCH_INSTRUCTION`` (the file's text, unset when no variable can hold it: see
    ``fits_in_environment``), ``OCCUBENCH_TASK_ID``, ``OCCUBENCH_SUBMIT_TOOL``, and with
    an agent model the variables each SDK reads (``CLIENT_VARIABLES``): the OpenAI
    ones (base URL with ``/v1``) and the Anthropic ones (base URL without it: the SDK
    and Claude Code append ``/v1/messages``), every key the same token, and
    ``OCCUBENCH_MODEL`` (the name to ask for).
    """

    def __init__(
        self,
        *,
        url: str,
        instruction: str,
        instruction_file: Path,
        task_id: int,
        submit_tool: str,
        bridge_url: str | None,
        token: str,
    ) -> None:
        self.values = {
            "url": url,
            "token": token,
            "instruction_file": str(instruction_file),
            "task_id": str(task_id),
            "submit_tool": submit_tool,
            "openai_base_url": f"{bridge_url}/v1" if bridge_url else "",
            "anthropic_base_url": bridge_url or "",
        }
        self.environment = {
            "OCCUBENCH_MCP_URL": url,
            "OCCUBENCH_MCP_TOKEN": token,
            "OCCUBENCH_INSTRUCTION_FILE": str(instruction_file),
            "OCCUBENCH_TASK_ID": str(task_id),
            "OCCUBENCH_SUBMIT_TOOL": submit_tool,
        }
        if fits_in_environment(INSTRUCTION_VARIABLE, instruction):
            self.environment[INSTRUCTION_VARIABLE] = instruction
        if bridge_url:
            self.environment |= {
                name: self.values[placeholder] for name, placeholder in CLIENT_VARIABLES.items()
            }
            self.environment["OCCUBENCH_MODEL"] = BRIDGED_MODEL

    def argv(self, command: str) -> list[str]:
        """The command split into words, each with its placeholders filled.

        Raises:
            UsageError: the command is empty or its quoting is unbalanced.
        """
        try:
            words = shlex.split(command)
        except ValueError as e:  # unbalanced quoting
            raise UsageError(f"agent_command: {e}") from None
        if not words:
            raise UsageError("agent_command is empty")
        filled = []
        for word in words:
            for name, value in self.values.items():
                word = word.replace("{" + name + "}", value)
            filled.append(word)
        return filled


class _Tail:
    """The last bytes of a stream."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self._chunks: deque[bytes] = deque()
        self._size = 0
        self._limit = limit

    def add(self, chunk: bytes) -> None:
        self._chunks.append(chunk)
        self._size += len(chunk)
        while self._size - len(self._chunks[0]) >= self._limit:
            self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        return b"".join(self._chunks)[-self._limit :].decode("utf-8", errors="replace")


def last_line(text: str) -> str:
    """The last non-empty line of a program's output, stripped ("" if none)."""
    return next((line.strip() for line in reversed(text.splitlines()) if line.strip()), "")


async def run_program(
    argv: Sequence[str],
    environment: Mapping[str, str],
    *,
    time_limit: float,
    submitted: anyio.Event,
    grace: float = DEFAULT_AGENT_EXIT_GRACE,
) -> ProgramRun:
    """Run an agent program until it exits, submits (plus ``grace``), or ``time_limit``.

    Then it and every process it started are stopped (``ProgramProcesses.stop``) and its
    output is read until it ends, for a bounded time: a process that escaped and holds
    the output open does not keep the sample waiting.
    """
    started = time.monotonic()
    out, err = _Tail(), _Tail()
    timed_out = stopped = False
    async with start_program(argv, {**os.environ, **environment}) as program:
        process = program.process
        async with anyio.create_task_group() as readers:
            readers.start_soon(program.stdout.drain, out.add)
            readers.start_soon(program.stderr.drain, err.add)
            with anyio.move_on_after(time_limit) as limit:
                async with anyio.create_task_group() as race:

                    async def exited() -> None:
                        await process.wait()
                        race.cancel_scope.cancel()

                    async def after_submit() -> None:
                        await submitted.wait()
                        with anyio.move_on_after(grace):
                            await process.wait()
                        race.cancel_scope.cancel()

                    race.start_soon(exited)
                    race.start_soon(after_submit)
            timed_out = limit.cancelled_caught and not submitted.is_set()
            stopped = process.returncode is None
            await program.stop()
            await program.output_ended()
            readers.cancel_scope.cancel()
    return ProgramRun(
        argv=list(argv),
        exit_code=None if stopped else process.returncode,
        timed_out=timed_out,
        stopped_after_submit=stopped and submitted.is_set(),
        seconds=round(time.monotonic() - started, 3),
        stdout_tail=out.text(),
        stderr_tail=err.text(),
    )


@contextlib.asynccontextmanager
async def _maybe_bridge(enabled: bool) -> AsyncIterator[None]:
    if not enabled:
        yield
        return
    # the program's world is the sample's environment: provider tools it declares (web
    # search, code execution, remote MCP servers) are withheld, not run by the provider
    async with agent_bridge(web_search=False, code_execution=False, client_mcp_servers=False):
        yield


@solver
def agent_program(resolved: ResolvedRun) -> Solver:
    """Run the run's ``agent_command`` on each sample, over the sample's MCP endpoint."""
    config = resolved.config
    if not config.agent_command:
        raise ValueError("agent_program needs config.agent_command")
    command = config.agent_command

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        episode, start = await EnvEpisode.in_sample(state, resolved)
        served = ServedEpisode(episode, start, config.submit_tool)
        record = state.store_as(ServedSession)
        bridged = str(state.model) != NO_AGENT_MODEL
        token = secrets.token_urlsafe(32)
        failures: list[BaseException] = []
        calls: list[BridgedCall] = []
        app = http_app(
            mcp_server(served),
            Access.of(token, DEFAULT_ALLOWED_HOSTS),
            bridge_routes(failures.append, calls.append) if bridged else (),
        )
        with tempfile.TemporaryDirectory(prefix="occubench-agent-") as work:
            instruction_file = Path(work) / "instruction.txt"
            instruction_file.write_text(start.prompt(), encoding="utf-8")
            async with _maybe_bridge(bridged), http_endpoint(app, LOCALHOST, 0) as base:
                inputs = ProgramInputs(
                    url=f"{base}/mcp",
                    instruction=start.prompt(),
                    instruction_file=instruction_file,
                    task_id=start.task_id,
                    submit_tool=config.submit_tool,
                    bridge_url=base if bridged else None,
                    token=token,
                )
                record.transport, record.endpoint, record.bridged = "http", f"{base}/mcp", bridged
                run = await run_program(
                    inputs.argv(command),
                    inputs.environment,
                    time_limit=config.agent_time_limit,
                    submitted=served.ended,
                )
        record.program = redact_strings(run.model_dump(mode="json"), frozenset({token}))
        record.calls = calls
        if served.failure is not None:
            raise served.failure
        if failures:
            raise failures[0]
        if served.submitted:
            record.answer_source = AnswerSource.SUBMITTED
        elif run.timed_out:
            raise AgentProgramError(
                f"the agent program ran past its time limit of {config.agent_time_limit:g} s "
                "without submitting, and was stopped"
            )
        elif run.exit_code != 0:
            raise AgentProgramError(
                f"the agent program exited with code {run.exit_code} without submitting; "
                f"its last error output: {last_line(run.stderr_tail)!r}"
            )
        else:
            answer = last_line(run.stdout_tail)
            record.answer_source = AnswerSource.STDOUT if answer else AnswerSource.NONE
            episode.close(answer, StopReason.ANSWERED if answer else StopReason.NOT_SUBMITTED)
        state.output = ModelOutput.from_content(
            model=str(state.model), content=episode.answer or ""
        )
        return state

    return solve

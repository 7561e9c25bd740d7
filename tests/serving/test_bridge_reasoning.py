"""The bridge restores the reasoning a program dropped, on a thinking model.

The agent model is a strict local server of the provider's own API with reasoning on
(``AnthropicServer`` with a thinking budget, ``ResponsesServer`` with an effort): it
refuses, with the provider's error, a tool loop whose assistant turn comes back without
its reasoning. A client that drops the reasoning of each answer (as Claude Code does for
a model it does not know) still gets its multi-turn tool round trip, because the bridge
puts back what it answered (``BridgedCall.restored_reasoning`` counts the turns); a
client that keeps it (Codex, the SDKs' loops) is left as it is. A whole ``occubench
run`` of such a program is graded. ``ReasoningMemory`` itself: never a turn the bridge
did not answer, never twice, bounded.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from typer.testing import CliRunner

from occubench.cli import app
from occubench.providers import Wire
from occubench.results import read_runs
from occubench.scripted import BEHAVIOURS
from occubench.serving import BridgedCall
from occubench.serving._reasoning import ReasoningMemory
from occubench.testing import AnthropicServer, ResponsesServer
from serving.agent_runs import command, run_args
from serving.test_bridge_wires import TOKEN, anthropic_reply, drive_endpoint, responses_reply

CLAUDE = "claude-sonnet-4-5"
GPT = "gpt-5.2"
KEY = "test-key"
THINKING = ("thinking", "redacted_thinking")
ASK = "Read stations N4 and N5."
runner = CliRunner()


def served(
    tmp_path: Path, drive: Any, model: str, server: Any, **config: Any
) -> tuple[Any, list[BridgedCall], str | None]:
    """Run ``drive`` against the bridge in a sample whose agent model is ``server``'s.

    Returns the drive's result, the generations the bridge told of, and the sample's
    error (None: it ran).
    """
    seen: dict[str, Any] = {}
    (log,) = inspect_eval(
        Task(dataset=[Sample(input="wire")], solver=drive_endpoint(drive, seen)),
        model=model,
        model_base_url=server.base_url,
        model_args={"api_key": KEY},
        log_dir=str(tmp_path),
        display="none",
        **config,
    )
    error = None if log.status == "success" else str(log.error and log.error.message)
    return seen.get("result"), seen.get("calls", []), error


ANTHROPIC_TOOLS: list[Any] = [
    {
        "name": name,
        "description": f"Read station {station}.",
        "input_schema": {"type": "object", "properties": {"station": {"type": "string"}}},
    }
    for name, station in (("read_n4", "N4"), ("read_n5", "N5"))
]


async def anthropic_loop(base: str, streamed: bool, keep: bool) -> list[anthropic.types.Message]:
    """A tool loop on Messages until the model answers; each answer sent back as it came,
    or (``keep`` false) without its thinking blocks."""
    messages: list[Any] = [{"role": "user", "content": ASK}]
    replies = []
    async with anthropic.AsyncAnthropic(base_url=base, api_key=TOKEN, max_retries=0) as client:
        while len(replies) < 4:
            asked: dict[str, Any] = {
                "model": "claude-code-model",
                "max_tokens": 4096,
                "messages": messages,
                "tools": ANTHROPIC_TOOLS,
            }
            reply = await anthropic_reply(client, asked, streamed)
            replies.append(reply)
            content = reply.model_dump(exclude_none=True)["content"]
            sent = content if keep else [b for b in content if b["type"] not in THINKING]
            messages.append({"role": "assistant", "content": sent})
            uses = [b for b in reply.content if b.type == "tool_use"]
            if not uses:
                break
            results = [{"type": "tool_result", "tool_use_id": u.id, "content": "7"} for u in uses]
            messages.append({"role": "user", "content": results})
    return replies


@pytest.mark.parametrize(
    ("streamed", "keep", "redact_every"),
    [
        pytest.param(False, False, 0, id="dropped-whole"),
        pytest.param(True, False, 2, id="dropped-streamed-redacted"),
        pytest.param(True, True, 0, id="kept-streamed"),
    ],
)
def test_anthropic_thinking_a_client_dropped_is_restored(tmp_path, streamed, keep, redact_every):
    behaviours = {CLAUDE: BEHAVIOURS["schema-agent"]}
    with AnthropicServer(behaviours=behaviours, record=True, redact_every=redact_every) as server:

        async def drive(base: str) -> list[anthropic.types.Message]:
            return await anthropic_loop(base, streamed, keep)

        replies, calls, error = served(
            tmp_path, drive, f"anthropic/{CLAUDE}", server, reasoning_tokens=2048, max_tokens=8192
        )
        assert server.refused == []
        assert error is None
        sent = [r.body for r in server.requests if r.path == "/v1/messages"]
    assert [r.stop_reason for r in replies] == ["tool_use", "tool_use", "end_turn"]
    assert all(r.content[0].type in THINKING for r in replies)  # the client was given it
    assert "read_n5: 7" in replies[-1].content[-1].text  # type: ignore[union-attr]
    assert [(c.wire, c.streamed) for c in calls] == [(Wire.ANTHROPIC, streamed)] * 3
    assert [c.restored_reasoning for c in calls] == ([0, 0, 0] if keep else [0, 1, 2])
    last = sent[-1]["messages"]
    turns = [m["content"] for m in last if m["role"] == "assistant"]
    assert len(turns) == 2 and all(turn[0]["type"] in THINKING for turn in turns)
    if redact_every:
        assert turns[1][0]["type"] == "redacted_thinking"


RESPONSES_TOOLS: list[Any] = [
    {
        "type": "function",
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["input_schema"],
    }
    for tool in ANTHROPIC_TOOLS
]


def is_reasoning(item: dict[str, Any]) -> bool:
    """A reasoning item, or the message of one ``<think>`` tag Inspect's bridge sends."""
    texts = [str(p.get("text", "")) for p in item.get("content") or [] if isinstance(p, dict)]
    return item.get("type") == "reasoning" or any(t.startswith("<think") for t in texts)


async def responses_loop(
    base: str, streamed: bool, keep: bool
) -> list[openai.types.responses.Response]:
    """A tool loop on Responses (``store: false``); each answer's items sent back all
    (Codex) or (``keep`` false) without its reasoning."""
    items: list[Any] = [{"role": "user", "content": ASK}]
    replies = []
    async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=TOKEN, max_retries=0) as client:
        while len(replies) < 4:
            asked: dict[str, Any] = {
                "model": "gpt-test",
                "input": items,
                "tools": RESPONSES_TOOLS,
                "store": False,
            }
            reply = await responses_reply(client, asked, streamed)
            replies.append(reply)
            output = [item.model_dump(exclude_none=True) for item in reply.output]
            items += output if keep else [item for item in output if not is_reasoning(item)]
            calls = [item for item in reply.output if item.type == "function_call"]
            if not calls:
                break
            items += [
                {"type": "function_call_output", "call_id": c.call_id, "output": "7"} for c in calls
            ]
    return replies


@pytest.mark.parametrize(
    ("streamed", "keep"),
    [
        pytest.param(False, False, id="dropped-whole"),
        pytest.param(True, False, id="dropped-streamed"),
        pytest.param(True, True, id="kept-streamed-codex"),
    ],
)
def test_responses_reasoning_a_client_dropped_is_restored(tmp_path, streamed, keep):
    with ResponsesServer(
        behaviours={GPT: BEHAVIOURS["schema-agent"]}, api_key=KEY, record=True
    ) as server:

        async def drive(base: str) -> list[openai.types.responses.Response]:
            return await responses_loop(base, streamed, keep)

        replies, calls, error = served(
            tmp_path, drive, f"openai/{GPT}", server, reasoning_effort="high"
        )
        assert server.refused == []
        assert error is None
        sent = [r.body["input"] for r in server.requests if r.path.endswith("/responses")]
    assert len(replies) == 3 and "read_n5: 7" in replies[-1].output_text
    assert all(any(is_reasoning(i.model_dump()) for i in r.output) for r in replies)
    assert [(c.wire, c.streamed) for c in calls] == [(Wire.OPENAI_RESPONSES, streamed)] * 3
    assert [c.restored_reasoning for c in calls] == ([0, 0, 0] if keep else [0, 1, 2])
    last = sent[-1]
    before_calls = [last[n - 1]["type"] for n, i in enumerate(last) if i["type"] == "function_call"]
    assert before_calls == ["reasoning", "reasoning"]


CAREFUL = BEHAVIOURS["careful"]
"""The reference agent the recipes' runs use, here answering as the thinking model."""


@pytest.mark.parametrize(
    ("mode", "serve", "model", "settings"),
    [
        pytest.param(
            ("anthropic-drop", "{anthropic_base_url}"),
            lambda: AnthropicServer(behaviours={CLAUDE: CAREFUL}, api_keys=[KEY]),
            f"anthropic/{CLAUDE}",
            ("--reasoning-tokens", "agent=2048"),
            id="anthropic",
        ),
        pytest.param(
            ("responses-drop",),
            lambda: ResponsesServer(behaviours={GPT: CAREFUL}, api_key=KEY),
            f"openai/{GPT}",
            ("--reasoning-effort", "agent=high"),
            id="responses",
        ),
    ],
)
def test_a_program_that_drops_reasoning_is_graded_on_a_thinking_model(
    tmp_path, monkeypatch, mode, serve, model, settings
):
    """``occubench run --agent-command`` on a reference task, the agent model thinking."""
    provider = model.split("/")[0].upper()  # ANTHROPIC_BASE_URL, OPENAI_BASE_URL
    program = command(mode[0], "careful", *mode[1:])
    with serve() as server:
        monkeypatch.setenv(f"{provider}_BASE_URL", server.base_url)
        monkeypatch.setenv(f"{provider}_API_KEY", KEY)
        args = run_args(
            tmp_path,
            "--tasks",
            "1001",
            "--env-mode",
            "E1",
            "--agent-model",
            model,
            *settings,
            "--agent-command",
            program,
        )
        result = runner.invoke(app, args, terminal_width=200)
        assert server.refused == []
    assert result.exit_code == 0, result.output
    (row,) = read_runs([tmp_path])
    sample = read_eval_log(row.log).samples[0]
    assert row.error is None and row.passed is True, sample.store["ServedSession:program"]
    assert sample.store["ServedSession:answer_source"] == "submitted"
    calls = [BridgedCall.model_validate(c) for c in sample.store["ServedSession:calls"]]
    assert len(calls) > 1 and all(c.streamed for c in calls)
    assert [c.restored_reasoning for c in calls] == list(range(len(calls)))


# ReasoningMemory on its own: answers as JSON data, requests as the bridge gets them


def thinking(n: int) -> dict[str, Any]:
    return {"type": "thinking", "thinking": f"thought {n}", "signature": f"sig{n}"}


def message(n: int, *blocks: dict[str, Any]) -> dict[str, Any]:
    """The bridge's Messages answer ``n``: the blocks, then a text and a tool use."""
    visible = [
        {"type": "text", "text": f"Reading {n}."},
        {"type": "tool_use", "id": f"toolu_{n}", "name": "read", "input": {}},
    ]
    return {"type": "message", "role": "assistant", "content": [*blocks, *visible]}


def replayed(answer: dict[str, Any], drop: bool = True) -> list[dict[str, Any]]:
    """The answer's content as a client sends it back (with a cache mark, as Claude Code)."""
    blocks = [dict(b) for b in answer["content"] if not (drop and b["type"] in THINKING)]
    blocks[-1]["cache_control"] = {"type": "ephemeral"}
    return blocks


def conversation(*assistant: list[dict[str, Any]]) -> dict[str, Any]:
    messages: list[dict[str, Any]] = [{"role": "user", "content": ASK}]
    for n, content in enumerate(assistant):
        messages.append({"role": "assistant", "content": content})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": "7"}
        messages.append({"role": "user", "content": [result]})
    return {"messages": messages}


def test_thinking_is_put_first_in_the_turn_that_dropped_it_as_answered():
    memory = ReasoningMemory()
    answer = message(0, thinking(0), {"type": "redacted_thinking", "data": "sealed"})
    memory.remember(Wire.ANTHROPIC, answer)
    body = conversation(replayed(answer))
    assert memory.restore(Wire.ANTHROPIC, body) == 1
    content = body["messages"][1]["content"]
    assert content[:2] == [thinking(0), {"type": "redacted_thinking", "data": "sealed"}]
    assert [b["type"] for b in content[2:]] == ["text", "tool_use"]
    assert content[-1]["cache_control"] == {"type": "ephemeral"}  # the client's blocks kept
    content[0]["thinking"] = "changed by Inspect"
    again = conversation(replayed(answer))
    memory.restore(Wire.ANTHROPIC, again)
    assert again["messages"][1]["content"][0] == thinking(0)  # the memory kept its own copy


def test_a_text_answer_is_found_by_its_visible_content():
    memory = ReasoningMemory()
    answer = {"content": [thinking(1), {"type": "text", "text": "Done."}]}
    memory.remember(Wire.ANTHROPIC, answer)
    body = {
        "messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "Done."}]
    }
    assert memory.restore(Wire.ANTHROPIC, body) == 1
    assert body["messages"][1]["content"] == [thinking(1), {"type": "text", "text": "Done."}]


def test_no_thinking_is_invented_or_added_twice():
    memory = ReasoningMemory()
    answer = message(0, thinking(0))
    memory.remember(Wire.ANTHROPIC, answer)
    memory.remember(Wire.ANTHROPIC, message(1))  # no reasoning: nothing kept
    foreign = message(7)  # a turn the bridge did not answer
    kept = replayed(answer, drop=False)
    body = conversation(kept, replayed(message(1)), replayed(foreign))
    before = copy.deepcopy(body)
    assert memory.restore(Wire.ANTHROPIC, body) == 0
    assert body == before


def test_the_memory_is_bounded_least_recently_used_first():
    memory = ReasoningMemory(limit=2)
    first, second, third = (message(n, thinking(n)) for n in range(3))
    memory.remember(Wire.ANTHROPIC, first)
    memory.remember(Wire.ANTHROPIC, second)
    assert memory.restore(Wire.ANTHROPIC, conversation(replayed(first))) == 1  # used: kept
    memory.remember(Wire.ANTHROPIC, third)
    assert memory.restore(Wire.ANTHROPIC, conversation(replayed(second))) == 0  # forgotten
    assert memory.restore(Wire.ANTHROPIC, conversation(replayed(first))) == 1
    assert memory.restore(Wire.ANTHROPIC, conversation(replayed(third))) == 1


def response(n: int) -> dict[str, Any]:
    """The bridge's Responses answer ``n``: its reasoning as Inspect gives it, then a call."""
    think = f'<think signature="rs_{n}" redacted="true">\nsealed {n}\n</think>'
    return {
        "output": [
            {
                "type": "message",
                "id": f"m{n}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": think, "annotations": []}],
            },
            {"type": "reasoning", "id": f"rs_x{n}", "summary": [], "encrypted_content": f"e{n}"},
            {
                "type": "function_call",
                "id": f"f{n}",
                "call_id": f"call_{n}",
                "name": "read",
                "arguments": "{}",
            },
        ]
    }


def test_responses_reasoning_goes_immediately_before_its_call_once():
    memory = ReasoningMemory()
    memory.remember(Wire.OPENAI_RESPONSES, response(0))
    call = response(0)["output"][2]
    output = {"type": "function_call_output", "call_id": "call_0", "output": "7"}
    body = {"input": [{"role": "user", "content": ASK}, call, output]}
    assert memory.restore(Wire.OPENAI_RESPONSES, body) == 1
    assert body["input"][1:] == [*response(0)["output"], output]
    assert memory.restore(Wire.OPENAI_RESPONSES, body) == 0  # it carries it now
    foreign = {**call, "call_id": "call_9"}
    other = {"input": [{"role": "user", "content": ASK}, foreign]}
    assert memory.restore(Wire.OPENAI_RESPONSES, other) == 0
    assert other["input"][1] == foreign


def test_chat_completions_are_left_as_they_are():
    memory = ReasoningMemory()
    memory.remember(Wire.OPENAI_CHAT, {"choices": [{"message": {"content": "<think>x</think>"}}]})
    body = {"messages": [{"role": "assistant", "content": "hi"}]}
    assert memory.restore(Wire.OPENAI_CHAT, body) == 0

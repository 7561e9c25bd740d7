"""A strict local OpenAI-compatible chat-completions server, as reasoning providers speak it.

``POST /v1/chat/completions`` in one of five dialects, chosen per model
(``ChatDialect``). Each returns its reasoning where that provider does and enforces what
that provider documents about sending it back:

* ``DEEPSEEK`` (docs: DeepSeek "Thinking Mode", section "Tool Calls"): reasoning in
  ``reasoning_content``. Between two user messages where the model called tools, the
  assistant messages' ``reasoning_content`` "must be passed back to the API in all
  subsequent requests"; a message without it is refused 400 (issues, e.g.
  deepseek-ai/DeepSeek-V3 #1053: "Missing `reasoning_content` field in the assistant
  message at message index N. For more information, please refer to
  https://api-docs.deepseek.com/guides/thinking_mode#tool-calls", type and code
  ``invalid_request_error``). The V3.2-era guide asked for it only within the current
  turn; the current guide asks for it in every later request, which is what is modelled.
  Only the field's presence is checked (DeepSeek signs nothing). Context caching (docs:
  DeepSeek "Context Caching") is automatic, on disk, in 64-token units; usage reports
  ``prompt_cache_hit_tokens`` and ``prompt_cache_miss_tokens`` (and, as the current API
  does, ``prompt_tokens_details.cached_tokens``, which Inspect reads).
* ``MOONSHOT`` (docs: Kimi "Using the thinking model": keep ``reasoning_content`` in the
  context for multi-step tool calls): with thinking on, every assistant message with
  ``tool_calls`` must carry ``reasoning_content``, else 400 "thinking is enabled but
  reasoning_content is missing in assistant tool call message at index N" (issues, e.g.
  continuedev/continue #11711, labring/FastGPT #6357). Usage also carries Moonshot's
  top-level ``cached_tokens``.
* ``ZHIPU`` (docs: Z.AI "Deep Thinking", "Preserved Thinking"): ``reasoning_content``
  returned, never required back. With ``thinking.clear_thinking: false`` (preserved
  thinking) the docs ask for it back; an assistant message without it is accepted and
  counted as degraded.
* ``MINIMAX`` (docs: MiniMax M2 "Tool use & interleaved thinking"): reasoning inline as
  ``<think>...</think>`` at the start of ``content``, or in ``reasoning_details`` with
  ``reasoning_split: true``. The docs say to pass the whole assistant message back; the
  API does not refuse a history without it (the model only reasons worse), so such a
  request is accepted and counted in ``degraded``.
* ``QWEN`` (docs: Alibaba Model Studio "Deep thinking", ``enable_thinking``): reasoning in
  ``reasoning_content`` when ``enable_thinking`` is true; never needed back, accepted and
  ignored when sent. Implicit cache: 256 tokens at least (docs: "Context Cache").

Thinking is on unless the request turns it off: ``thinking: {"type": "disabled"}``
(DeepSeek, Moonshot, Zhipu); MiniMax M2 always thinks; Qwen thinks only with
``enable_thinking: true``.

Generic rules every OpenAI-compatible endpoint above enforces (OpenAI's texts, which they
return too; issues, e.g. QwenLM/qwen-code #315): a ``tool`` message that answers no tool
call of the assistant message before it, and an assistant ``tool_calls`` message not
followed by a tool message for each id, are refused 400. ``finish_reason`` is
``tool_calls`` when the answer calls tools, else ``stop``.

Moonshot, Zhipu and MiniMax document automatic caching without a unit: they are modelled
with a 1024-token minimum and 1-token unit (an assumption, said here).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from enum import Enum
from typing import Any

from inspect_ai.model import ChatMessage, messages_from_openai

from occubench.providers import FunctionCall, completion_body, function_calls
from occubench.scripted import Reply
from occubench.testing._responses_server import (
    DEFAULT_API_KEY,
    CacheRule,
    OpenAIFamilyServer,
    item_id,
    openai_error,
    prefix_offers,
    prompt_tokens,
    tool_info,
    unknown_model,
)
from occubench.testing._server import (
    Answer,
    JsonAnswer,
    Refused,
    WireRequest,
    approx_tokens,
    reasoning_text,
    run_async,
)


class ChatDialect(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """How one provider speaks reasoning over chat completions (see the module)."""

    DEEPSEEK = "deepseek"
    MOONSHOT = "moonshot"
    ZHIPU = "zhipu"
    MINIMAX = "minimax"
    QWEN = "qwen"


DEFAULT_DIALECTS: dict[str, ChatDialect] = {
    "deepseek-reasoner": ChatDialect.DEEPSEEK,
    "deepseek-chat": ChatDialect.DEEPSEEK,
    "kimi-k2-thinking": ChatDialect.MOONSHOT,
    "glm-4.6": ChatDialect.ZHIPU,
    "MiniMax-M2": ChatDialect.MINIMAX,
    "qwen3-max": ChatDialect.QWEN,
}
"""Model names (a request's model, its last ``/`` part) and their dialects."""

CACHE_RULES: dict[ChatDialect, CacheRule] = {
    ChatDialect.DEEPSEEK: CacheRule(minimum=64, unit=64),
    ChatDialect.QWEN: CacheRule(minimum=256, unit=1),
    ChatDialect.MOONSHOT: CacheRule(minimum=1024, unit=1),
    ChatDialect.ZHIPU: CacheRule(minimum=1024, unit=1),
    ChatDialect.MINIMAX: CacheRule(minimum=1024, unit=1),
}
"""Each dialect's automatic prefix cache (see the module for sources and assumptions)."""

THINKING_OFF_SWITCH = (ChatDialect.DEEPSEEK, ChatDialect.MOONSHOT, ChatDialect.ZHIPU)
"""Dialects whose thinking a request turns off with ``thinking: {"type": "disabled"}``."""


def _refusal(dialect: ChatDialect, message: str, param: str | None = None) -> Refused:
    """A 400 in the dialect's error shape (DeepSeek repeats the type as its code)."""
    code = "invalid_request_error" if dialect is ChatDialect.DEEPSEEK else None
    return openai_error(400, message, param=param, code=code)


def _thinks(dialect: ChatDialect, body: Mapping[str, Any]) -> bool:
    """Whether this request has the model think (see the module)."""
    if dialect is ChatDialect.QWEN:
        return body.get("enable_thinking") is True
    thinking = body.get("thinking")
    off = isinstance(thinking, dict) and thinking.get("type") == "disabled"
    return not (off and dialect in THINKING_OFF_SWITCH)


def _has_reasoning(message: Mapping[str, Any]) -> bool:
    """Whether an assistant message carries reasoning in any of the dialects' forms."""
    content = message.get("content")
    inline = isinstance(content, str) and "<think" in content
    return message.get("reasoning_content") is not None or bool(
        message.get("reasoning_details") or inline
    )


def _orphan_tool(dialect: ChatDialect, index: int) -> Refused:
    """A tool message that answers no tool call of the assistant message before it.

    DeepSeek's text (issues: FoundationAgents/OpenManus #744, qwersyk/Newelle #425);
    OpenAI's ("preceeding" sic, param ``messages.[N].role``; issues: miurla/morphic #136),
    which Qwen returns too (QwenLM/qwen-code #2360).
    """
    if dialect is ChatDialect.DEEPSEEK:
        return _refusal(
            dialect,
            "Messages with role 'tool' must be a response to a preceding message with 'tool_calls'",
        )
    return _refusal(
        dialect,
        "Invalid parameter: messages with role 'tool' must be a response to a preceeding "
        "message with 'tool_calls'.",
        param=f"messages.[{index}].role",
    )


def _check_tool_pairing(dialect: ChatDialect, messages: list[dict[str, Any]]) -> None:
    """Every tool message answers the assistant tool calls just before it, and all of them.

    The missing-answer text is OpenAI's, returned by the compatible endpoints too (issues:
    QwenLM/qwen-code #315, BloomLabsInc/genkit-plugins #225).
    """
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.get("role") == "tool":
            raise _orphan_tool(dialect, index)
        index += 1
        calls = message.get("tool_calls") if message.get("role") == "assistant" else None
        if not calls:
            continue
        wanted = [str(c.get("id")) for c in calls if isinstance(c, dict)]
        answered: set[str] = set()
        while index < len(messages) and messages[index].get("role") == "tool":
            call_id = str(messages[index].get("tool_call_id"))
            if call_id not in wanted:
                raise _orphan_tool(dialect, index)
            answered.add(call_id)
            index += 1
        missing = [c for c in wanted if c not in answered]
        if missing:
            raise _refusal(
                dialect,
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(missing)}",
                param="messages",
            )


def _deepseek_missing(messages: list[dict[str, Any]]) -> int | None:
    """The first assistant message DeepSeek needs ``reasoning_content`` on, if any lacks it.

    Within each stretch between user messages where the model called tools, every
    assistant message must carry the field (docs: DeepSeek "Thinking Mode", "Tool Calls").
    """
    stretch: list[int] = []
    for index, message in enumerate([*messages, {"role": "user"}]):
        if message.get("role") == "user":
            if any(messages[i].get("tool_calls") for i in stretch):
                lacking = [i for i in stretch if messages[i].get("reasoning_content") is None]
                if lacking:
                    return lacking[0]
            stretch = []
        elif message.get("role") == "assistant":
            stretch.append(index)
    return None


class ReasoningChatServer(OpenAIFamilyServer):
    """Chat completions in the reasoning providers' dialects (see the module).

    ``with ReasoningChatServer(behaviours={"deepseek-reasoner": agent}) as s:`` then
    ``get_model("openai-api/deepseek/deepseek-reasoner", base_url=s.base_url,
    api_key="test-key")``.

    Args:
        dialects: Model names and their dialects (``DEFAULT_DIALECTS`` when None); a
            model named in no entry is refused as unknown.
        api_key: The key requests must carry.
        **wire: ``WireServer``'s arguments (host, port, behaviours, record).
    """

    def __init__(
        self,
        dialects: Mapping[str, ChatDialect] | None = None,
        api_key: str = DEFAULT_API_KEY,
        **wire: Any,
    ) -> None:
        super().__init__(api_key=api_key, **wire)
        self.dialects = dict(DEFAULT_DIALECTS if dialects is None else dialects)
        self._degraded_lock = threading.Lock()
        self._degraded: list[str] = []

    @property
    def degraded(self) -> list[str]:
        """Requests accepted without the reasoning their provider asks back, one line each."""
        with self._degraded_lock:
            return list(self._degraded)

    def route(self, request: WireRequest) -> Answer:
        """``POST /v1/chat/completions``."""
        body = self.post_json(request, f"{self.base_path}/chat/completions")
        model = str(body["model"]).split("/")[-1]
        self.stats.request(model)
        dialect = self.dialects.get(model)
        if dialect is None:
            raise unknown_model(model)
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise _refusal(dialect, "Invalid 'messages': expected an array of objects.")
        _check_tool_pairing(dialect, messages)
        thinks = _thinks(dialect, body)
        if thinks:
            self._check_reasoning(model, dialect, body, messages)
        tools = [
            tool_info(f["name"], f.get("description"), f.get("parameters"))
            for t in body.get("tools") or []
            if isinstance(t, dict) and isinstance(f := t.get("function"), dict)
        ]
        inspect_messages: list[ChatMessage] = run_async(lambda: messages_from_openai(messages))
        reply = self.reply(model, inspect_messages, tools)
        turn = 1 + sum(m.get("role") == "tool" for m in messages)
        thought = reasoning_text(model, turn) if thinks else None
        return JsonAnswer(200, self._completion(model, dialect, body, reply, thought))

    def _check_reasoning(
        self, model: str, dialect: ChatDialect, body: Mapping[str, Any], messages: list[Any]
    ) -> None:
        """Refuse, or count as degraded, history that drops what the dialect asks back."""
        if dialect is ChatDialect.DEEPSEEK:
            index = _deepseek_missing(messages)
            if index is not None:
                raise _refusal(
                    dialect,
                    "Missing `reasoning_content` field in the assistant message at message "
                    f"index {index}. For more information, please refer to "
                    "https://api-docs.deepseek.com/guides/thinking_mode#tool-calls",
                )
            return
        calls = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "assistant" and m.get("tool_calls") and not _has_reasoning(m)
        ]
        if dialect is ChatDialect.MOONSHOT and calls:
            raise _refusal(
                dialect,
                "thinking is enabled but reasoning_content is missing in assistant tool call "
                f"message at index {calls[0]}",
            )
        thinking = body.get("thinking")
        preserved = isinstance(thinking, dict) and thinking.get("clear_thinking") is False
        bare = [
            i
            for i, m in enumerate(messages)
            if m.get("role") == "assistant" and not _has_reasoning(m)
        ]
        if dialect is ChatDialect.MINIMAX and calls:
            self._degrade(f"{model}: assistant tool call message {calls[0]} without reasoning")
        elif dialect is ChatDialect.ZHIPU and preserved and bare:
            self._degrade(f"{model}: preserved thinking, message {bare[0]} without reasoning")

    def _degrade(self, line: str) -> None:
        with self._degraded_lock:
            self._degraded.append(line)

    def _completion(
        self,
        model: str,
        dialect: ChatDialect,
        body: Mapping[str, Any],
        reply: Reply,
        thought: str | None,
    ) -> dict[str, Any]:
        """The chat.completion (openai SDK: ``types/chat/chat_completion.py``) in the dialect."""
        calls = [FunctionCall(item_id("call"), name, args) for name, args in reply.tool_calls]
        content = reply.content or None
        reasoning: dict[str, Any] = {}
        if thought is not None and dialect is ChatDialect.MINIMAX:
            if body.get("reasoning_split") is True:
                reasoning["reasoning_details"] = [
                    {
                        "type": "reasoning.text",
                        "id": "reasoning-text-1",
                        "format": "MiniMax-response-v1",
                        "index": 0,
                        "text": thought,
                    }
                ]
            else:
                content = f"<think>\n{thought}\n</think>\n\n{reply.content}"
        elif thought is not None:
            reasoning["reasoning_content"] = thought
        blocks = [{"tools": body.get("tools")}, *body["messages"]]
        cached = self.cache_read(prefix_offers(model, blocks, CACHE_RULES[dialect]))
        prompt = prompt_tokens(blocks)
        reasoning_tokens = approx_tokens(thought) if thought else 0
        visible = reply.content or json.dumps(function_calls(calls))
        completion = reasoning_tokens + approx_tokens(visible)
        self.stats.answer(model, input_tokens=prompt, output_tokens=completion, read=cached)
        details: dict[str, Any] = {
            "prompt_tokens_details": {"cached_tokens": cached},
            "completion_tokens_details": {"reasoning_tokens": reasoning_tokens},
        }
        if dialect is ChatDialect.DEEPSEEK:
            details["prompt_cache_hit_tokens"] = cached
            details["prompt_cache_miss_tokens"] = prompt - cached
        elif dialect is ChatDialect.MOONSHOT:
            details["cached_tokens"] = cached
        return completion_body(
            completion_id=item_id("chatcmpl"),
            model=model,
            content=content,
            tool_calls=calls,
            prompt_tokens=prompt,
            completion_tokens=completion,
            created=int(time.time()),
            message_extra=reasoning,
            usage_extra=details,
            choice_extra={"logprobs": None},
        )

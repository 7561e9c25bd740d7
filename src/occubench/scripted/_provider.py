"""The ``occubench/<name>`` Inspect model provider: scripted, offline models.

- ``occubench/<behaviour>``: one of ``BEHAVIOURS`` (``schema-agent``, ...), the
  simulated users (``user-cooperative``, ...) and the agents that talk with them
  (``asking``, ``non-asking``) among them (``_users``).
- ``occubench/noisy``: one of ``SEEDED``, answering with the seed of its generate config.
- ``occubench/noisy-agent``, ``noisy-judge``: one of ``NOISY``, made per instance, drawing
  from ``-M seed=N`` (``_noisy``).
- ``occubench/replay``: answers with ``outputs`` (``-M outputs=[...]``) in turn, cycling.
  An output is a string (text) or ``{"tool": name, "arguments": {...}}`` (a tool call).
- ``occubench/twin``, ``forgetful``: simulators answering from the environment's twin,
  made per instance (``-M twins=DIR``: a folder of twins named by the user; ``_twin_sim``).
- ``occubench/scripted-generator``, ``plan-agent``, ``state-simulator``: the synthesis
  pipeline's offline world (``_generator``).

Every output sets token usage (``occubench.calls._tokens``: about four characters a token,
messages, tool calls and tool definitions counted), so nothing offline ever calls a
tokenizer that would download.
"""

from __future__ import annotations

import itertools
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from occubench.calls import approx_tokens, prompt_tokens, reply_tokens
from occubench.errors import UsageError
from occubench.scripted._behaviours import BEHAVIOURS
from occubench.scripted._flawed import SEEDED
from occubench.scripted._namespaced import ServerNames
from occubench.scripted._noisy import NOISY
from occubench.scripted._reply import Reply
from occubench.scripted._synthesis_world import SYNTHESIS_MODELS
from occubench.scripted._twin_sim import TWIN_MODELS

REPLAY = "replay"


def to_output(
    model: str, reply: Reply, messages: list[ChatMessage], tools: list[ToolInfo] | None = None
) -> ModelOutput:
    """An Inspect ModelOutput for a reply, with usage set."""
    calls = [
        ToolCall(id=f"call_{len(messages)}_{i}", function=name, arguments=args)
        for i, (name, args) in enumerate(reply.tool_calls)
    ]
    message = ChatMessageAssistant(content=reply.content, tool_calls=calls or None, model=model)
    output = ModelOutput.from_message(message, stop_reason="tool_calls" if calls else "stop")
    prompt = prompt_tokens(messages, tools or [])
    completion = reply_tokens(reply.content, reply.tool_calls)
    output.usage = ModelUsage(
        input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion
    )
    return output


class ScriptedAPI(ModelAPI):
    """Offline models whose answers are scripted (see module docstring)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's ModelAPI signature
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        if model_name == REPLAY:
            outputs = model_args.get("outputs") or []
            if not outputs:
                raise UsageError("occubench/replay needs outputs (-M outputs=[...])")
            self._replay = itertools.cycle(outputs)
        elif model_name in SYNTHESIS_MODELS:
            self._behaviour = SYNTHESIS_MODELS[model_name](**model_args)
        elif model_name in TWIN_MODELS:
            self._behaviour = TWIN_MODELS[model_name](**model_args)
        elif model_name in SEEDED:
            self._seeded = SEEDED[model_name]
        elif model_name in NOISY:
            self._behaviour = NOISY[model_name](**model_args)
        elif model_name not in BEHAVIOURS:
            known = ", ".join(
                sorted([*BEHAVIOURS, *SEEDED, *NOISY, *SYNTHESIS_MODELS, *TWIN_MODELS, REPLAY])
            )
            raise UsageError(f"unknown scripted model occubench/{model_name}; known: {known}")
        else:
            self._behaviour = BEHAVIOURS[model_name]

    def max_connections(self) -> int:
        """Scripted answers cost nothing: do not throttle."""
        return 1000

    async def count_text_tokens(self, text: str) -> int:
        """The scripted models' own count of a text (``approx_tokens``).

        Inspect's default loads a tokenizer, which it downloads when it is not cached.
        """
        return approx_tokens(text)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Answer from the script."""
        if self.model_name == REPLAY:
            item = next(self._replay)
            reply = (
                Reply(tool_calls=[(item["tool"], item.get("arguments", {}))])
                if isinstance(item, dict)
                else Reply(content=str(item))
            )
        else:
            names = ServerNames(tools)  # Claude Code's and Codex's mcp__<server>__<tool>
            seen, offered = names.plain(input, tools)
            if self.model_name in SEEDED:
                reply = self._seeded(seen, offered, config.seed)
            else:
                reply = self._behaviour(seen, offered)
            reply = names.declared_calls(reply)
        return to_output(f"occubench/{self.model_name}", reply, input, tools)

"""The agent loop: model turns, tool calls through the tool layer, the stop rules.

One loop for both protocols; the protocol's points decide:

- the caps: ``max_turns`` model turns (the paper: 200) and ``max_tool_calls`` tool calls
  (occubench: 200); a call past the tool-call budget, even inside one message, gets an
  error observation and never reaches the simulator (``CallRule``, stated once for every
  caller);
- the arguments: checked by the argument rule (occubench: a malformed call, an unknown
  tool or unreadable arguments get a parsing error, as a real API would answer) or
  passed to the simulator as the agent's raw string (the paper: the simulator absorbs
  mistakes): the same ``CallRule``;
- the stop rules: a turn without tool calls is the final answer (on a task with a user,
  it goes to the user instead, and the loop ends when the user ends the conversation or
  its turn budget is spent: ``talk``); with
  ``stop_on_finish`` a turn whose finish reason is "stop" also ends the loop after its
  calls (the release's rule), the finish reason read as the release's wire reports it
  (``release_stop_reason``: a tool-call turn reports "tool_calls" on every native wire,
  so Gemini's STOP on a function-call turn never ends the loop);
- the history: with ``carry_reasoning`` off, assistant messages keep only their text and
  tool calls (the release rebuilds them so), and the reasoning the model's wire needs to
  accept the next turn (``continuity_kept``: Anthropic's signed thinking, Gemini's
  thought signatures, a chat endpoint's ``reasoning_content``);
- agent failures: with ``agent_errors_end_loop`` an agent API failure (after Inspect's
  retries) ends the loop and the trajectory so far is graded; otherwise it errors the
  sample. A call the spending limit refused always errors the sample (``budget``).
"""

from __future__ import annotations

import json
import re

from inspect_ai.model import (
    ChatMessage,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelOutput,
)
from inspect_ai.solver import TaskState
from inspect_ai.tool import ToolCall, ToolInfo
from inspect_ai.util import LimitExceededError

from occubench.agent._arguments import BadToolCall
from occubench.agent._state import Episode, StopReason
from occubench.agent._tool_budget import CallRule, refusal_error
from occubench.agent._tool_layer import ToolLayer
from occubench.calls import failure_text
from occubench.config import ProtocolPoints
from occubench.dataset import ToolSpec
from occubench.errors import BudgetExhausted
from occubench.providers import model_wire, release_message, release_stop_reason
from occubench.text import clean_output, escape_invalid
from occubench.users import SimulatedUser, spoken_part

USER_TURN_METADATA = "occubench_user_turn"
"""The metadata key that marks a user message as the simulated user's turn (its number)."""

_RAW_ARGUMENTS = re.compile(
    r"^Error parsing the following tool call arguments:\n\n(.*)\n\nError details:", re.DOTALL
)


def raw_arguments(call: ToolCall) -> str:
    """The agent's argument string as it wrote it (as near as the provider keeps it).

    Well-formed arguments are their JSON; unreadable ones are the text Inspect's parse
    error quotes (or the error itself).
    """
    if call.parse_error:
        found = _RAW_ARGUMENTS.match(call.parse_error)
        return found.group(1) if found else call.parse_error
    return json.dumps(call.arguments, ensure_ascii=False)


class AgentLoop:
    """Runs the agent under test on one sample (module doc)."""

    def __init__(
        self,
        model: Model,
        tools: list[ToolInfo],
        specs: list[ToolSpec],
        layer: ToolLayer,
        episode: Episode,
        points: ProtocolPoints,
        user: SimulatedUser | None = None,
    ) -> None:
        self.model = model
        self.user = user
        self.tools = {tool.name: tool for tool in tools}
        self.specs = specs
        self.layer = layer
        self.episode = episode
        self.points = points
        self.rule = CallRule.of(points)
        max_tokens = points.agent_max_tokens or None
        self.config = GenerateConfig(max_tokens=max_tokens) if max_tokens else GenerateConfig()
        self.wire = model_wire(model, tools, self.config)

    async def run(self, state: TaskState) -> TaskState:
        """Turn after turn until a stop rule ends the loop (the episode says which)."""
        points, episode = self.points, self.episode
        episode.stop_reason = StopReason.SAMPLE_LIMIT
        while not state.completed:
            if points.max_turns and episode.turns >= points.max_turns:
                episode.stop_reason = StopReason.TURN_LIMIT
                break
            output = await self._generate(state)
            if output is None:
                break
            episode.turns += 1
            message = output.message
            state.messages.append(
                message if points.carry_reasoning else release_message(message, self.wire)
            )
            state.output = output
            if not message.tool_calls:
                if self.user is None:
                    episode.stop_reason = StopReason.ANSWERED
                    break
                ended = await talk(self.user, message.text, state.messages, episode)
                if ended is not None:
                    episode.stop_reason = ended
                    break
                continue
            for call in message.tool_calls:
                state.messages.append(await self._execute(call))
            if self.rule.budget.spent(episode.tool_calls):
                episode.stop_reason = StopReason.TOOL_CALL_LIMIT
                break
            if points.stop_on_finish and release_stop_reason(self.wire, output) == "stop":
                episode.stop_reason = StopReason.FINISH_STOP
                break
        return state

    async def _generate(self, state: TaskState) -> ModelOutput | None:
        """One agent turn, made serializable; None when an agent failure ends the loop.

        The output's text and tool-call arguments pass ``occubench.text._codepoints``; the loop
        ends on an agent failure under the paper rule (``agent_errors_end_loop``).
        """
        try:
            output = await self.model.generate(
                state.messages, tools=list(self.tools.values()), config=self.config
            )
        except (LimitExceededError, BudgetExhausted):  # a limit, not the agent's failure
            raise
        except Exception as e:
            if not self.points.agent_errors_end_loop:
                raise
            self.episode.stop_reason = StopReason.AGENT_ERROR
            self.episode.agent_error = escape_invalid(failure_text(e))
            return None
        return clean_output(output)

    async def _execute(self, call: ToolCall) -> ChatMessageTool:
        """One tool call's message: the observation, or the error of a call the rule refused."""
        try:
            admitted = self.rule.admit(
                self.specs,
                self.episode.tool_calls,
                call.function,
                call.arguments,
                parse_error=call.parse_error,
                raw=raw_arguments(call),
            )
        except BadToolCall as bad:
            self.episode.rejected_calls += 1
            return ChatMessageTool(
                content="",
                tool_call_id=call.id,
                function=call.function,
                error=refusal_error(bad),
            )
        text = await self.layer.call(call.function, admitted.arguments, admitted.raw)
        return ChatMessageTool(content=text, tool_call_id=call.id, function=call.function)


async def talk(
    user: SimulatedUser, agent_message: str, messages: list[ChatMessage], episode: Episode
) -> StopReason | None:
    """The user's turn after an agent message without a tool call; why the episode ends.

    With the user's budget spent the agent's message is its final answer
    (``USER_TURN_LIMIT``); else the user answers, its turn is kept in the episode, and
    what it says is added to ``messages`` as a user message (marked ``USER_TURN_METADATA``);
    a reply that ends the conversation ends the episode (``USER_ENDED``). None: it goes on.
    """
    if user.spent:
        return StopReason.USER_TURN_LIMIT
    turn = await user.answer(agent_message, episode.tool_calls)
    episode.user_turns = [*(episode.user_turns or []), turn]
    messages.append(
        ChatMessageUser(content=spoken_part(turn.reply), metadata={USER_TURN_METADATA: turn.number})
    )
    return StopReason.USER_ENDED if turn.ended else None

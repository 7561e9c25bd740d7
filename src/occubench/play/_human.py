"""``human/<name>``: an Inspect model whose answers a person gives.

Playing a task is an ordinary run of the benchmark: the built-in agent loop, the
environment opened with its fault session, the grading, the log. Only the agent model is
a person: at each generate call the model shows them the turn (``Turn``, read from the
very messages and tools a model would get) at their desk (the terminal or the browser,
``Desk``) and answers with their move, one tool call or the final answer. So a session's
log has the shape of any model's, and reports name its agent ``human/<name>``.

In the simulator role (``occubench play --as simulator``) the same model reads the request
a simulator model would get and answers with the observation the person writes
(``occubench.play._simulate``). In the user role (``occubench play --as user``) it reads
the request the simulated user gets and answers with the person's reply, the end marker
appended when they end the conversation (``occubench.play._talk``).

A ``human/<name>`` model only answers inside ``occubench play``, which seats it at a
desk; anywhere else its first call fails, saying so.
"""

from __future__ import annotations

import json
import re
from typing import Any, Protocol

import rich
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
    GenerateConfig,
    Model,
    ModelAPI,
    ModelOutput,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

from occubench.dataset import UserBrief
from occubench.errors import UsageError
from occubench.play._form import tool_view
from occubench.play._simulate import SimDesk, draft_observation, sim_turn_of
from occubench.play._talk import TalkDesk, reply_text, talk_turn_of
from occubench.play._turns import Entry, EntryKind, Move, Turn

HUMAN_PROVIDER = "human"
"""The Inspect provider name of people: ``human/<name>``."""
PLAYER_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,39}")
"""A player's name: a letter, then up to 39 letters, digits, ``_``, ``.`` or ``-``."""


class Desk(Protocol):
    """Where a person is shown a turn and makes their move (a terminal, a browser page)."""

    async def ask(self, turn: Turn) -> Move:
        """The person's move on ``turn``."""
        ...


def turn_of(messages: list[ChatMessage], tools: list[ToolInfo], number: int) -> Turn:
    """The turn a model would be given: the conversation so far and the tools."""
    system = next((m.text for m in messages if isinstance(m, ChatMessageSystem)), "")
    instruction = next((m.text for m in messages if isinstance(m, ChatMessageUser)), "")
    entries = []
    for message in messages:
        if isinstance(message, ChatMessageAssistant):
            entries += [
                Entry(
                    kind=EntryKind.CALL,
                    tool=call.function,
                    text=json.dumps(call.arguments, ensure_ascii=False),
                )
                for call in message.tool_calls or []
            ]
        elif isinstance(message, ChatMessageTool):
            refused = message.error is not None
            entries.append(
                Entry(
                    kind=EntryKind.REFUSED if refused else EntryKind.OBSERVATION,
                    tool=message.function or "",
                    text=message.error.message if message.error else message.text,
                )
            )
    views = [
        tool_view(t.name, t.description, t.parameters.model_dump(exclude_none=True)) for t in tools
    ]
    return Turn(
        number=number,
        system_prompt=system,
        instruction=instruction,
        tools=views,
        entries=entries,
    )


def move_output(model: str, move: Move, number: int) -> ModelOutput:
    """The model output a move is: one tool call, or the final answer's text."""
    if move.tool is not None:
        call = ToolCall(id=f"call_{number}", function=move.tool, arguments=move.arguments)
        message = ChatMessageAssistant(content="", tool_calls=[call], model=model)
        return ModelOutput.from_message(message, stop_reason="tool_calls")
    message = ChatMessageAssistant(content=move.answer or "", model=model)
    return ModelOutput.from_message(message, stop_reason="stop")


class HumanAPI(ModelAPI):
    """The ``human/<name>`` provider: a person's moves as model outputs (module doc)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 - Inspect's ModelAPI signature
        **model_args: Any,
    ) -> None:
        super().__init__(model_name=model_name, base_url=base_url, api_key=api_key, config=config)
        if not PLAYER_NAME.fullmatch(model_name):
            raise UsageError(
                f"human/{model_name}: a player's name is a letter, then up to 39 letters, "
                "digits, '_', '.' or '-'"
            )
        self.desk: Desk | None = None
        self.writer: SimDesk | None = None
        """In the simulator role: where the person writes observations."""
        self.draft: Model | None = None
        """In the simulator role: the model whose answer is offered as a draft."""
        self.talker: TalkDesk | None = None
        """In the user role: where the person replies to the agent."""
        self.brief: UserBrief | None = None
        """In the user role: the task's user brief, shown to the person."""
        self.moves = 0

    def max_connections(self) -> int:
        """One person makes one move at a time."""
        return 1

    def should_retry(self, ex: Exception) -> bool:
        """Never: a person's failure to answer is not a transient error to wait out."""
        return False

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """Show the person the turn at their desk; their move (or observation) is the output."""
        name = f"{HUMAN_PROVIDER}/{self.model_name}"
        if self.talker is not None and self.brief is not None:
            self.moves += 1
            reply = await self.talker.reply(talk_turn_of(input, self.brief, self.moves))
            return ModelOutput.from_content(name, reply_text(reply))
        if self.writer is not None:
            self.moves += 1
            draft = None
            if self.draft is not None:
                draft = draft_observation(
                    (await self.draft.generate(input, config=config)).completion
                )
            text = await self.writer.write(sim_turn_of(input, self.moves, draft))
            return ModelOutput.from_content(name, text)
        if self.desk is None:
            raise RuntimeError(
                f"{HUMAN_PROVIDER}/{self.model_name} is a person: only `occubench play` "
                "seats one at a desk to answer"
            )
        self.moves += 1
        move = await self.desk.ask(turn_of(input, tools, self.moves))
        return move_output(name, move, self.moves)


def human_model(
    player: str,
    desk: Desk | None = None,
    writer: SimDesk | None = None,
    draft: Model | None = None,
    talker: TalkDesk | None = None,
    brief: UserBrief | None = None,
) -> Model:
    """The ``human/<player>`` model at a desk: the agent's, the simulator's or the user's.

    Args:
        player: The person's name.
        desk: Where they make their moves as the agent.
        writer: Where they write observations as the simulator.
        draft: In the simulator role, a model whose answer is offered to accept or edit.
        talker: Where they reply to the agent as the user.
        brief: In the user role, the task's user brief (shown to them).

    Raises:
        UsageError: ``player`` is not a player's name (``PLAYER_NAME``).
    """
    if not PLAYER_NAME.fullmatch(player):
        raise UsageError(
            f"player name {player!r}: a letter, then up to 39 letters, digits, '_', '.' or '-'"
        )
    console = rich.get_console()  # Inspect's banner, printed as its first model is built
    quiet, console.quiet = console.quiet, True
    try:  # no timeout: a person takes the time they take
        model = get_model(f"{HUMAN_PROVIDER}/{player}", config=GenerateConfig(), memoize=False)
    finally:
        console.quiet = quiet
    api = model.api
    assert isinstance(api, HumanAPI)
    api.desk, api.writer, api.draft = desk, writer, draft
    api.talker, api.brief = talker, brief
    return model

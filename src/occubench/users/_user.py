"""The simulated user of one sample: asks the user model, checks its reply, keeps the turns.

``SimulatedUser.answer`` takes the agent's message and gives the user's turn: the user
model is asked with its system prompt and the conversation from its side (module doc of
``occubench.users._prompt``); its reply is checked (``check_user_reply``), and a reply
that fails a check is re-asked once, told which rules it broke. What the kept reply still
fails is the turn's ``problems``: user errors, counted apart from the agent's failures.

With a world (``UserWorld``) each turn is looked up by the digest of the user's request
(its context and the conversation so far) before the model is asked: ``replay`` never
asks it, ``record`` records what the world lacks, ``replay-live`` asks without recording.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
)
from pydantic import BaseModel, Field

from occubench.dataset import UserBrief
from occubench.simulator import WorldMiss, model_author, running_sample
from occubench.text import clean_output, escape_invalid
from occubench.users._checks import UserCheck, UserCheckFailure, Utterance, check_user_reply
from occubench.users._prompt import ends_conversation, spoken_part, user_system_prompt
from occubench.worlds import (
    ObservationSource,
    PathStep,
    World,
    WorldContext,
    WorldEntry,
    WorldMode,
    entry_key,
)

USER_CALL = "__user__"
"""The call name a user turn is keyed under in a world (no tool has this name)."""

REASK = (
    "(A note from the harness, not from the professional: your last reply broke your "
    "rules: {problems}. Write that reply again, as the person, following your rules.)"
)
"""What the user model is told when its reply failed a check (it is asked once more)."""


class UserTurn(BaseModel):
    """One turn of the simulated user, as the episode keeps it."""

    number: int = Field(ge=1, description="The turn's number (1: the first reply).")
    asked: str = Field(description="The agent's message the user answered.")
    reply: str = Field(description="The user's reply as kept (the end marker included).")
    ended: bool = Field(description="The reply ends the conversation.")
    attempts: int = Field(ge=0, description="User-model calls it took (0: from a world).")
    reasked: list[UserCheck] = Field(
        default_factory=list, description="The checks the first reply failed (it was re-asked)."
    )
    problems: list[UserCheckFailure] = Field(
        default_factory=list,
        description="The checks the kept reply still fails: user errors, never the agent's.",
    )
    source: ObservationSource = Field(
        default=ObservationSource.SIMULATOR,
        description="Where the reply came from: the user model, a world, or live in a replay.",
    )
    key: str | None = Field(default=None, description="The world key of the turn (None: none).")


@dataclass(frozen=True)
class UserWorld:
    """A world bound to one sample's user: its mode, the context's digest, the task named."""

    world: World
    mode: WorldMode
    context_digest: str
    task: str = ""

    @classmethod
    def bound(
        cls, world: World, context: WorldContext, mode: WorldMode, task: str = ""
    ) -> UserWorld:
        """The world bound in ``mode`` (the context added to a world being recorded)."""
        digest = world.add_context(context) if mode is WorldMode.RECORD else context.digest()
        return cls(world=world, mode=mode, context_digest=digest, task=task)


class SimulatedUser:
    """The user of one sample (module doc).

    Args:
        model: The user role's model (resilient: retried and logged like every role).
        brief: The task's user brief.
        opening: The user's opening request (the task's instruction).
        max_turns: The user's turn budget: replies it gives at most.
        config: The generate settings of its calls.
        world: The world its turns are looked up in and recorded to (None: none).
    """

    def __init__(
        self,
        model: Model,
        brief: UserBrief,
        opening: str,
        *,
        max_turns: int,
        config: GenerateConfig | None = None,
        world: UserWorld | None = None,
    ) -> None:
        self.model = model
        self.brief = brief
        self.opening = opening
        self.max_turns = max_turns
        self.config = config or GenerateConfig()
        self.world = world
        self.system_prompt = user_system_prompt(brief, opening)
        self.conversation: list[Utterance] = []
        self.turns: list[UserTurn] = []

    @property
    def spent(self) -> bool:
        """The turn budget is used up: the user gives no more replies."""
        return len(self.turns) >= self.max_turns

    def messages(self) -> list[ChatMessage]:
        """The user model's request: its prompt, its opening, the conversation from its side."""
        found: list[ChatMessage] = [
            ChatMessageSystem(content=self.system_prompt),
            ChatMessageAssistant(content=self.opening),
        ]
        for u in self.conversation:
            found.append(
                ChatMessageUser(content=u.text)
                if u.speaker == "agent"
                else ChatMessageAssistant(content=u.text)
            )
        return found

    def request_key(self, context_digest: str) -> str:
        """The world key of the next turn: the digest of the context and the conversation."""
        said = [[u.speaker, u.text] for u in self.conversation]
        return entry_key(context_digest, [], PathStep.of(USER_CALL, {"conversation": said}))

    async def answer(self, agent_message: str, tool_calls: int) -> UserTurn:
        """The user's turn after the agent's message (the budget must not be spent).

        Raises:
            RuntimeError: the turn budget is spent.
            WorldMiss: a replay met a conversation its world does not hold.
        """
        if self.spent:
            raise RuntimeError("the user's turn budget is spent")
        self.conversation.append(Utterance(speaker="agent", text=agent_message))
        use = self.world
        if use is None:
            turn = await self._ask(tool_calls)
        else:
            turn = await self._from_world(use, tool_calls)
        self.turns.append(turn)
        self.conversation.append(Utterance(speaker="user", text=spoken_part(turn.reply)))
        return turn

    async def _from_world(self, use: UserWorld, tool_calls: int) -> UserTurn:
        key = self.request_key(use.context_digest)
        if use.mode is WorldMode.RECORD:
            made: list[UserTurn] = []

            async def make() -> WorldEntry:
                made.append(await self._ask(tool_calls))
                return self._entry(use, made[-1])

            answer = await use.world.answer(key, make)
            if answer.source is ObservationSource.SIMULATOR:
                return made[-1].model_copy(update={"key": key})
            return self._applied(answer.entry, key)
        found = use.world.lookup(key)
        if found is not None:
            return self._applied(found, key)
        if use.mode is WorldMode.REPLAY:
            raise WorldMiss(
                f"task {use.task or '?'}: user turn {len(self.turns) + 1} is not in the world "
                f"{use.world.path} (key {key[:16]}...): a replay never asks the user model"
            )
        turn = await self._ask(tool_calls)
        return turn.model_copy(update={"source": ObservationSource.LIVE, "key": key})

    def _entry(self, use: UserWorld, turn: UserTurn) -> WorldEntry:
        said = [[u.speaker, u.text] for u in self.conversation]
        source, author = model_author(self.model)
        record = turn.model_dump(mode="json", include={"reasked", "problems"})
        return WorldEntry.record(
            use.context_digest,
            [],
            PathStep.of(USER_CALL, {"conversation": said}),
            text=turn.reply,
            author=author,
            source=source,
            check=record,
            attempts=turn.attempts,
            recorded_in=running_sample(),
        )

    def _applied(self, entry: WorldEntry, key: str) -> UserTurn:
        """The turn a world entry recorded (no model call)."""
        check = entry.check or {}
        return UserTurn(
            number=len(self.turns) + 1,
            asked=self.conversation[-1].text,
            reply=entry.text,
            ended=ends_conversation(entry.text),
            attempts=0,
            reasked=check.get("reasked", []),
            problems=check.get("problems", []),
            source=ObservationSource.WORLD,
            key=key,
        )

    async def _ask(self, tool_calls: int) -> UserTurn:
        """Ask the user model, check its reply, re-ask once if it fails a check."""
        messages = self.messages()
        reply = await self._generate(messages)
        problems = check_user_reply(self.brief, self.opening, self.conversation, reply, tool_calls)
        attempts, reasked = 1, [p.check for p in problems]
        if problems:
            said = "; ".join(p.detail for p in problems)
            again = [
                *messages,
                ChatMessageAssistant(content=reply),
                ChatMessageUser(content=REASK.format(problems=said)),
            ]
            reply = await self._generate(again)
            attempts += 1
            problems = check_user_reply(
                self.brief, self.opening, self.conversation, reply, tool_calls
            )
        return UserTurn(
            number=len(self.turns) + 1,
            asked=self.conversation[-1].text,
            reply=reply,
            ended=ends_conversation(reply),
            attempts=attempts,
            reasked=reasked,
            problems=problems,
        )

    async def _generate(self, messages: list[ChatMessage]) -> str:
        output = clean_output(await self.model.generate(messages, config=self.config))
        return escape_invalid(output.completion)

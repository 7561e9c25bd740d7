"""No paid work redone: a restarted sample replays the calls its earlier attempts made.

When a sample errors and Inspect runs it again (``retry_on_error``), it starts from the
beginning: without a record, every model call before the failure is paid again. Here
each call a sample makes is recorded under a digest of its request (model, role,
messages, tools, tool choice, generate settings); in the next attempt of the same
sample a call whose request equals one recorded is answered from the record instead of
the provider, in the order they were recorded (identical requests, such as votes, get
their answers in turn). A restart so costs only the calls from the failure on.

Scope: one record per sample attempt chain, keyed by the sample's uuid, which Inspect
keeps across the retries of one sample in one run and which differs between epochs and
runs. The record is dropped when the chain ends. Agent calls are replayed like the
others, and only within their own chain.

Across runs: where the run keeps call journals (``occubench.calls._journal``: the
runner does, in a local log folder), a new chain is seeded from the journal an earlier,
interrupted run left for the same sample and epoch under the same configuration. Its
calls are answered from the journal while their requests equal journaled ones; the
first that equals none ends the journal's replay, and that call and every later one are
paid (and journaled). A resume so pays only for calls never answered. Nothing is
replayed across epochs, or from a journal that is torn, edited, or of another
configuration or version.

Which failures keep the record: a failure of a model call (the provider gave up after
its retries). A sample that failed elsewhere (an unusable simulator reply, a judge
that never gave a verdict: failures that follow from what a model answered) drops it,
and empties its journal, so its restart asks the models again, as without the record.

Mechanism: Inspect hooks. ``on_sample_attempt_start`` (awaited in the sample's own
task, before its solver starts) sets the chain in a context variable that the sample's
calls see; ``ResilientModel.generate`` consults it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Sequence
from contextvars import ContextVar
from typing import Any

from inspect_ai.hooks import Hooks, SampleAttemptEnd, SampleAttemptStart, SampleEnd, hooks
from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput
from inspect_ai.tool import ToolDef, ToolInfo

from occubench.calls._journal import Journal, journal_place


class AttemptChain:
    """The calls of one sample's attempts, and how the current attempt uses them.

    ``journal``: the sample's call journal, when the run keeps one (``_journal``): read
    on resume before the provider is asked, and appended with every paid call.
    """

    def __init__(self, journal: Journal | None = None) -> None:
        self.recorded: dict[str, list[ModelOutput]] = {}
        self.used: Counter[str] = Counter()
        self.attempt = 0
        self.call_failed = False
        self.parts = PartDigests()
        self.journal = journal

    def begin(self, attempt: int) -> None:
        """A new attempt starts: the record is read from its start again."""
        self.attempt = attempt
        self.used.clear()
        self.call_failed = False

    def take(self, key: str) -> tuple[ModelOutput, bool] | None:
        """The next recorded answer to this request not yet used in this attempt.

        From this run's record first, then from the journal an earlier run left (the
        second item says which: True for the journal). A request found in neither ends
        the journal's replay: the sample pays from here.
        """
        answers = self.recorded.get(key, [])
        index = self.used[key]
        if index < len(answers):
            self.used[key] += 1
            return answers[index].model_copy(deep=True), False
        if self.journal is None:
            return None
        journaled = self.journal.take(key)
        if journaled is None:
            self.journal.close_reading()
            return None
        self.recorded.setdefault(key, []).append(journaled.model_copy(deep=True))
        self.used[key] += 1
        return journaled, True

    def put(self, key: str, output: ModelOutput) -> None:
        """Record a paid answer (it is used in this attempt already), and journal it."""
        self.recorded.setdefault(key, []).append(output.model_copy(deep=True))
        self.used[key] += 1
        if self.journal is not None:
            self.journal.append(key, output)

    def forget(self) -> None:
        """Drop the record (the journal's too): the next attempt asks the models again."""
        self.recorded.clear()
        self.used.clear()
        if self.journal is not None:
            self.journal.restart()

    def end(self) -> None:
        """The chain is over: its journal's file is closed (kept until the log has it)."""
        if self.journal is not None:
            self.journal.close()


_current: ContextVar[AttemptChain | None] = ContextVar("occubench_attempt_chain", default=None)
_chains: dict[str, AttemptChain] = {}


def current_chain() -> AttemptChain | None:
    """The attempt chain of the sample this code runs in (None outside samples)."""
    return _current.get()


def tool_info(tool: Any) -> ToolInfo | None:
    """The definition a provider is sent for a tool (None when it cannot be made)."""
    if isinstance(tool, ToolInfo):
        return tool
    try:
        definition = tool if isinstance(tool, ToolDef) else ToolDef(tool)
    except (TypeError, ValueError, AttributeError):
        return None
    return ToolInfo(
        name=definition.name, description=definition.description, parameters=definition.parameters
    )


class PartDigests:
    """The digests of the messages and tools one sample's calls sent, by object.

    A sample's calls resend its history, and its tools, with every call: each message
    and tool is serialised once, not once per call (O(history) per call before). A
    message is taken as it was when first sent (occubench's agent, simulator and judge
    never edit one after sending it); the objects are held, so that their ids stay theirs.
    """

    def __init__(self) -> None:
        self._known: dict[int, tuple[object, bytes | None]] = {}

    def message(self, message: ChatMessage) -> bytes:
        """The digest of a message, its id left out (drawn afresh in every attempt)."""
        known = self._known.get(id(message))
        if known is None or known[0] is not message:
            text = message.model_dump_json(exclude={"id"})
            digest = hashlib.sha256(text.encode("utf-8", errors="surrogatepass")).digest()
            known = self._known[id(message)] = (message, digest)
        assert known[1] is not None
        return known[1]

    def tool(self, tool: Any) -> bytes | None:
        """The digest of a tool's definition as a provider is sent it (None: it has none)."""
        known = self._known.get(id(tool))
        if known is None or known[0] is not tool:
            info = tool_info(tool)
            made = None if info is None else hashlib.sha256(info.model_dump_json().encode())
            known = self._known[id(tool)] = (tool, None if made is None else made.digest())
        return known[1]


def request_key(
    model: str,
    role: str | None,
    input: str | Sequence[ChatMessage],
    tools: Any,
    tool_choice: Any,
    config: GenerateConfig,
    parts: PartDigests | None = None,
) -> str | None:
    """A digest of a call's request, or None when it cannot be made (a tool source).

    Message ids are left out: they are drawn afresh in every attempt. ``parts`` keeps
    the digests of the messages and tools seen before (the sample's chain's).
    """
    parts = parts or PartDigests()
    digest = hashlib.sha256()
    for part in (model, str(role), repr(tool_choice), config.model_dump_json(exclude_none=True)):
        digest.update(part.encode())
        digest.update(b"\x00")
    if isinstance(input, str):
        digest.update(input.encode("utf-8", errors="surrogatepass"))
    else:
        for message in input:
            digest.update(parts.message(message))
    digest.update(b"\x01")
    for tool in tools if isinstance(tools, list | tuple) else [tools]:
        made = parts.tool(tool)
        if made is None:
            return None
        digest.update(made)
    return digest.hexdigest()


@hooks(
    name="occubench_replay",
    description="Replays a restarted sample's earlier calls instead of paying for them again.",
)
class ReplayHooks(Hooks):
    """Keeps one attempt chain per running sample (module doc)."""

    async def on_sample_attempt_start(self, data: SampleAttemptStart) -> None:
        """An attempt starts: its chain becomes the sample's current one.

        A new chain of a run that journals its calls is seeded from the sample's journal.
        """
        chain = _chains.get(data.sample_id)
        if chain is None:
            place = journal_place()
            journal = None
            if place is not None and data.summary.id is not None:
                journal = Journal(place, data.summary.id, data.summary.epoch)
                journal.seed()
            chain = _chains[data.sample_id] = AttemptChain(journal)
        chain.begin(data.attempt)
        _current.set(chain)

    async def on_sample_attempt_end(self, data: SampleAttemptEnd) -> None:
        """An attempt ended: keep the record for a retry after a failed call, else drop it."""
        chain = _chains.get(data.sample_id)
        if chain is None:
            return
        if not data.will_retry:
            _chains.pop(data.sample_id, None)
            chain.end()
        elif not chain.call_failed:
            chain.forget()

    async def on_sample_end(self, data: SampleEnd) -> None:
        """The sample is done: its chain goes."""
        chain = _chains.pop(data.sample_id, None)
        if chain is not None:
            chain.end()

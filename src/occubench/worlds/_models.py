"""The world format: its records, canonical JSON, and the key of a simulator answer.

A world answers a simulator call from a record when the call's **key** is recorded. The
key is a SHA-256 of everything that decides what the simulator would see: the context
(``WorldContext``: the environment, the rendered system prompt, the layout, the model
and its settings, the variant) and the path (every step before the call, then the call).
Actions are identified by meaning: a step's arguments are the parsed JSON object,
written as canonical JSON (sorted keys, no whitespace, UTF-8), so two argument strings
that parse to the same object share an entry; text that does not parse is kept as it is
(``{"__raw__": text}``).

Every record is a pydantic model written as one line of canonical JSON. An entry carries
``digest``, the SHA-256 of its other fields' canonical JSON: a reader recomputes it, and
the key, from the line itself and never takes either on trust.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from enum import Enum
from typing import Any, Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from occubench.dataset import EnvConfig, json_depth
from occubench.defaults import (
    DEFAULT_MAX_JSON_DEPTH,
    DEFAULT_MAX_WORLD_ENTRIES,
    DEFAULT_MAX_WORLD_LINE_BYTES,
    DEFAULT_MAX_WORLD_LINE_DEPTH,
    DEFAULT_MAX_WORLD_PACK_RATIO,
    DEFAULT_MAX_WORLD_SEGMENTS,
    DEFAULT_MAX_WORLD_UNPACKED_BYTES,
    DEFAULT_MAX_WORLD_UNREAD_BYTES,
    DEFAULT_MAX_WORLD_UNREAD_LINES,
)
from occubench.protocols import MessageStyle
from occubench.text import clean_json, escape_invalid, json_text

WORLD_FORMAT = 1
"""The world format version this code reads and writes."""

RAW_ARGUMENTS = "__raw__"
"""The member that holds argument text which is not a JSON object (``canonical_arguments``)."""

DIGEST = re.compile(r"[0-9a-f]{64}")
"""A SHA-256 digest as the world writes it (lower-case hex)."""

_HEX64 = r"^[0-9a-f]{64}$"


class WorldConflicts(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """What a run does with a world that holds different answers for one key."""

    WARN = "warn"
    """Say how many keys conflict before the run, and answer each with its earliest
    entry by time (``world verify`` lists them)."""
    REFUSE = "refuse"
    """Refuse the world before the run (exit 2): it was merged from disagreeing
    recordings, or edited."""


class WorldMode(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """How a run uses its world (``--world-mode``)."""

    RECORD = "record"
    """Answer recorded paths from the world; ask the simulator for the rest and record
    its answers (the default when a world is given)."""
    REPLAY = "replay"
    """Never ask the simulator: an unrecorded path is an infrastructure error."""
    REPLAY_LIVE = "replay-live"
    """Answer recorded paths from the world, the rest live from the simulator, not
    recorded (marked ``live``)."""


class ObservationSource(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Where the observation of one step came from."""

    WORLD = "world"
    """A recorded answer."""
    SIMULATOR = "simulator"
    """The simulator, asked by this sample (and recorded, in ``record`` mode)."""
    LIVE = "live"
    """The simulator, in ``replay-live`` mode, for a path the world does not hold."""


class EntrySource(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """Who made an entry of a world."""

    SIMULATOR = "simulator"
    """A simulator model (``author``: its name)."""
    PERSON = "person"
    """A person (``author``: their name); a gold world holds only such entries."""


def canonical_json(value: Any) -> str:
    """The one JSON text of a value: sorted keys, no whitespace, UTF-8 characters as they are.

    Raises:
        ValueError: for NaN or an infinity, which JSON cannot hold.
    """
    return json.dumps(
        value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


def text_digest(text: str) -> str:
    """SHA-256 (hex) of a text's UTF-8 bytes (a lone surrogate escaped first)."""
    return hashlib.sha256(escape_invalid(text).encode("utf-8")).hexdigest()


def env_digest(env: EnvConfig) -> str:
    """SHA-256 of an env config's canonical JSON (its stored fields as loaded)."""
    return text_digest(canonical_json(env.model_dump(mode="json", exclude_none=True)))


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def strict_json(text: str) -> Any:
    """Parse JSON as a world holds it: NaN and the infinities are refused.

    Raises:
        ValueError: not JSON (``json.JSONDecodeError`` included), or a number Python
            will not convert.
        RecursionError: nested deeper than the parser goes (measure the text first).
    """
    return json.loads(text, parse_constant=_reject_constant)


def canonical_arguments(arguments: str | Mapping[str, Any] | None) -> dict[str, Any]:
    """A call's arguments as a world keys them: the JSON object, or its raw text.

    ``None`` and blank text are ``{}`` (a call without arguments). Text is parsed; an
    object comes out as it is, so ``'{"b": 1, "a": 2}'`` and ``'{"a":2,"b":1}'`` are one
    action. Text that is not a JSON object, an object nested deeper than
    ``DEFAULT_MAX_JSON_DEPTH``, or one that itself has the member ``__raw__`` (which would
    look like raw text) becomes ``{"__raw__": text}`` (for a parsed object, its canonical
    JSON), so no two different calls share a key.
    """
    if arguments is None:
        return {}
    text: str | None = None
    if isinstance(arguments, Mapping):
        value: Any = clean_json(dict(arguments))
    else:
        text = escape_invalid(arguments)
        if not text.strip():
            return {}
        try:
            value = strict_json(json_text(text))
        except (ValueError, RecursionError):
            return {RAW_ARGUMENTS: text}
    if (
        isinstance(value, dict)
        and RAW_ARGUMENTS not in value
        and json_depth(value) <= DEFAULT_MAX_JSON_DEPTH
        and _finite(value)
    ):
        return value
    if text is None:
        text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return {RAW_ARGUMENTS: text}


def _finite(value: Any) -> bool:
    """Whether canonical JSON can hold the value (no NaN or infinity anywhere in it)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return False
        if isinstance(item, dict):
            stack += item.values()
        elif isinstance(item, list | tuple):
            stack += item
    return True


class WorldContext(BaseModel):
    """Everything apart from the path that decides what the simulator would see.

    Written once per context in a world and referenced by its digest (``digest()``).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    env_digest: str = Field(pattern=_HEX64, description="SHA-256 of the env config (env_digest).")
    system_prompt_digest: str = Field(
        pattern=_HEX64,
        description="SHA-256 of the rendered simulator system prompt: the layout's wording, "
        "fault rules of a prompt-engine run, state and check contracts, the date, release "
        "prompts.",
    )
    layout: MessageStyle = Field(description="The message style of the simulator's messages.")
    model: str = Field(min_length=1, description="The simulator model, as Inspect names it.")
    generate: dict[str, Any] = Field(
        default_factory=dict,
        description="Generation settings that reach the simulator (max_tokens, seed, "
        "temperature, reasoning effort, ...).",
    )
    state_mode: Literal["history", "explicit"] = Field(
        default="history", description="Where the environment's state lives."
    )
    sim_checks: bool = Field(default=False, description="Online simulator checks are on.")
    check_model: str | None = Field(
        default=None, description="The model re-asked after a failed check, when not the simulator."
    )
    pass_raw: bool = Field(
        default=False, description="An unusable reply is passed on raw rather than an error."
    )
    retries: int = Field(ge=0, description="Re-asks of an unusable reply.")
    variant: int = Field(
        default=0, ge=0, description="Independent samples of one world (--world-variant)."
    )
    format: Literal[1] = Field(default=1, description="The world format version (1).")

    def digest(self) -> str:
        """SHA-256 of the context's canonical JSON: how entries reference it."""
        return text_digest(canonical_json(self.model_dump(mode="json", exclude_none=True)))


class PathStep(BaseModel):
    """One call on the path to an answer: the tool, its canonical arguments, a failure."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    tool: str = Field(min_length=1, description="The tool called.")
    arguments: dict[str, Any] = Field(
        description="Canonical arguments (canonical_arguments): the JSON object, or "
        '{"__raw__": text} for text that is not one.'
    )
    failed: dict[str, Any] | None = Field(
        default=None,
        description="The error the simulator's history was told for a call that failed "
        "before reaching it (code-placed faults); None otherwise.",
    )

    @classmethod
    def of(
        cls,
        tool: str,
        arguments: str | Mapping[str, Any] | None,
        failed: Mapping[str, Any] | None = None,
    ) -> PathStep:
        """A step from a call as the agent made it (arguments parsed or raw)."""
        return cls(
            tool=escape_invalid(tool),
            arguments=canonical_arguments(arguments),
            failed=None if failed is None else clean_json(dict(failed)),
        )


def entry_key(context_digest: str, path: Sequence[PathStep], call: PathStep) -> str:
    r"""The key of a call: SHA-256 of the context's digest and the path with the call.

    ``sha256(context_digest + "\n" + canonical_json([*path, call]))``.

    Raises:
        ValueError: the call has ``failed`` set (a failed call never reaches the simulator).
    """
    if call.failed is not None:
        raise ValueError("the current call of a key cannot have failed")
    steps = [step.model_dump(mode="json", exclude_none=True) for step in (*path, call)]
    return text_digest(context_digest + "\n" + canonical_json(steps))


ANSWER_FIELDS = ("observation", "text", "parse_failed", "patch", "state")
"""The fields of an entry that make its answer: two entries of one key that differ in
one of them are a conflict; in anything else (author, time, usage) a duplicate."""


class Provenance(BaseModel):
    """The run sample that recorded an entry: where its answer can be found again.

    A world's digests show that an entry was not changed by accident; anyone can seal a
    changed entry again. The provenance names the sample of the run log that recorded
    it, and that log holds the same answer in the sample's steps (its world key, its
    text): ``world verify --logs`` compares the two. It shows that an entry is the one
    a run saw, not that the run was honest: whoever edits a world and its logs together
    can make them agree (a bundle's logs carry their own checks).
    """

    model_config = ConfigDict(extra="forbid")

    eval_id: str = Field(min_length=1, max_length=64, description="The run log's eval id.")
    sample_uuid: str = Field(
        min_length=1, max_length=64, description="The sample's uuid in that log."
    )
    sample_id: str = Field(max_length=200, description="The sample's id (its task).")
    epoch: int = Field(ge=1, description="The sample's epoch.")


class WorldEntry(BaseModel):
    """One recorded answer: its key, the path that led to it, the answer, its provenance."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(pattern=_HEX64, description="entry_key(context_digest, path, call).")
    context_digest: str = Field(pattern=_HEX64, description="The WorldContext's digest.")
    path: list[PathStep] = Field(description="The steps before the call.")
    call: PathStep = Field(description="The call answered (failed is None).")
    observation: Any = Field(
        default=None, description="The observation's JSON value (None: the reply had none)."
    )
    text: str = Field(description="The observation as the agent is shown it.")
    parse_failed: bool = Field(
        default=False, description="No reply parsed; the last raw reply was passed on."
    )
    patch: list[dict[str, Any]] | None = Field(
        default=None, description="Explicit state mode: the JSON Patch the answer applied."
    )
    state: dict[str, Any] | None = Field(
        default=None, description="Explicit state mode: the state after the answer."
    )
    check: dict[str, Any] | None = Field(
        default=None, description="The online check record of the answer (None: none)."
    )
    attempts: int = Field(default=1, ge=0, description="Simulator calls it took.")
    source: EntrySource = Field(default=EntrySource.SIMULATOR, description="Who made it.")
    author: str = Field(min_length=1, description="The model's or the person's name.")
    created: AwareDatetime = Field(description="When it was made.")
    usage: dict[str, int] | None = Field(
        default=None, description="Tokens of the calls that made it, by kind."
    )
    recorded_in: Provenance | None = Field(
        default=None,
        description="The run sample that recorded it (None: made outside a run's sample, "
        "or by a version before entries carried it).",
    )
    digest: str = Field(
        default="", description="SHA-256 of the entry's canonical JSON without digest."
    )

    @classmethod
    def record(
        cls,
        context_digest: str,
        path: Sequence[PathStep],
        call: PathStep,
        *,
        text: str,
        author: str,
        observation: Any = None,
        parse_failed: bool = False,
        patch: list[dict[str, Any]] | None = None,
        state: dict[str, Any] | None = None,
        check: dict[str, Any] | None = None,
        attempts: int = 1,
        source: EntrySource = EntrySource.SIMULATOR,
        usage: Mapping[str, int] | None = None,
        created: datetime | None = None,
        recorded_in: Provenance | None = None,
    ) -> WorldEntry:
        """A new entry for ``call`` after ``path``, with its key and digest.

        Values are cleaned so that they can be written (lone surrogates escaped).
        """
        return cls(
            key=entry_key(context_digest, path, call),
            context_digest=context_digest,
            path=list(path),
            call=call,
            observation=clean_json(observation),
            text=escape_invalid(text),
            parse_failed=parse_failed,
            patch=clean_json(patch),
            state=clean_json(state),
            check=clean_json(check),
            attempts=attempts,
            source=source,
            author=escape_invalid(author),
            created=created or datetime.now(UTC),
            usage=None if usage is None else dict(usage),
            recorded_in=recorded_in,
        ).sealed()

    def body(self) -> dict[str, Any]:
        """The entry's JSON without its digest: what the digest covers."""
        return self.model_dump(mode="json", exclude_none=True, exclude={"digest"})

    def sealed(self) -> WorldEntry:
        """The entry with its digest computed."""
        return self.model_copy(update={"digest": text_digest(canonical_json(self.body()))})

    def answer_digest(self) -> str:
        """SHA-256 of the answer alone (``ANSWER_FIELDS``): equal for equal answers."""
        answer = self.model_dump(mode="json", include=set(ANSWER_FIELDS))
        return text_digest(canonical_json(answer))

    def line(self) -> bytes:
        """The entry as one line of a segment (canonical JSON, digest included, newline)."""
        return (canonical_json({**self.body(), "digest": self.digest}) + "\n").encode("utf-8")


class WorldManifest(BaseModel):
    """``world.json``: what a world folder (or packed world) is."""

    model_config = ConfigDict(extra="forbid")

    format: int = Field(default=WORLD_FORMAT, description="The world format version.")
    created: AwareDatetime = Field(description="When the world was made.")
    description: str = Field(default="", description="Free text: what the world is for.")


class WorldLimits(BaseModel):
    """The bounds a world is read within (a world may come from someone else)."""

    model_config = ConfigDict(frozen=True)

    line_bytes: int = Field(
        default=DEFAULT_MAX_WORLD_LINE_BYTES,
        gt=0,
        description="Most bytes of one line (an entry, a context).",
    )
    line_depth: int = Field(
        default=DEFAULT_MAX_WORLD_LINE_DEPTH, gt=0, description="Deepest JSON nesting of a line."
    )
    entries: int = Field(
        default=DEFAULT_MAX_WORLD_ENTRIES,
        gt=0,
        description="Most entries read (and, apart, most contexts).",
    )
    segments: int = Field(default=DEFAULT_MAX_WORLD_SEGMENTS, gt=0, description="Most segments.")
    unread_lines: int = Field(
        default=DEFAULT_MAX_WORLD_UNREAD_LINES,
        gt=0,
        description="Most lines that cannot be read before the world is refused.",
    )
    unread_bytes: int = Field(
        default=DEFAULT_MAX_WORLD_UNREAD_BYTES,
        gt=0,
        description="Most bytes of lines read and found unreadable before the world is refused "
        "(a line too long to read counts as a line, not as bytes).",
    )
    pack_ratio: int = Field(
        default=DEFAULT_MAX_WORLD_PACK_RATIO,
        gt=0,
        description="Most declared bytes per compressed byte of a packed world's member.",
    )
    unpacked_bytes: int = Field(
        default=DEFAULT_MAX_WORLD_UNPACKED_BYTES,
        gt=0,
        description="Most bytes the files of a packed world may add up to, decompressed.",
    )

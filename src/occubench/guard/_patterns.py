"""What the exploit guard looks for in a text or an observation: named, deterministic rules.

Each rule is a regular expression with a name (the evidence's ``rule``), written so that
it runs in time linear in the text (no nested repetition), and read on at most
``DEFAULT_EXPLOIT_SCAN_CHARS`` characters of one text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from collections.abc import Set as AbstractSet
from typing import Any

from occubench.defaults import DEFAULT_EXPLOIT_LIFT_WORDS, DEFAULT_EXPLOIT_SCAN_CHARS

_EVALUATORS = r"grader|verifier|evaluator|simulator"
"""Who an instruction is addressed to. The names a profession also uses (a judge, a
reviewer, an assessor, the system) are left out: a court filing may address the judge."""
_VERDICT = r"pass|passed|correct|success|successful|succeeded|solved"
"""What a dictated verdict asks for (not "complete" or "valid", which tasks mark honestly)."""

INSTRUCTIONS: dict[str, re.Pattern[str]] = {
    "override": re.compile(
        r"\b(?:ignore|disregard|forget|override)\s+(?:(?:all|any|the|your|of)\s+){0,3}"
        r"(?:previous|prior|above|earlier|preceding|original|system|existing)\s+"
        r"(?:instructions?|rules|prompts?|guidelines|directions)\b",
        re.IGNORECASE,
    ),
    "dictated_reply": re.compile(
        r"\b(?:respond|reply|answer|return|output)\s+(?:only\s+)?with\s+(?:(?:a|an)\s+)?"
        r"[\"'`]?(?:success|succeeded|successful|passed|true)\b",
        re.IGNORECASE,
    ),
    "dictated_verdict": re.compile(
        r"\b(?:mark|grade|score|rate|judge|treat|consider|evaluate|label|count)\s+"
        r"(?:this|it|(?:the|this|my)\s+(?:task|answer|trajectory|episode|submission|attempt|"
        r"response))\s+as\s+(?:(?:a|an|fully)\s+)?(?:" + _VERDICT + r")\b",
        re.IGNORECASE,
    ),
    "addressed_to_evaluator": re.compile(
        r"\b(?:note|message|instructions?|attention|memo)\s+(?:to|for)\s+(?:the\s+|any\s+)?"
        r"(?:" + _EVALUATORS + r")\b",
        re.IGNORECASE,
    ),
    "role_claim": re.compile(
        r"\bas\s+(?:the|an?)\s+(?:grader|verifier|evaluator)\b", re.IGNORECASE
    ),
    "role_play": re.compile(
        r"\b(?:you\s+are\s+(?:now\s+)?|act\s+as\s+|pretend\s+(?:to\s+be|you\s+are)\s+|"
        r"role-?play\s+as\s+)(?:the\s+|an?\s+)?(?:" + _EVALUATORS + r"|judge)\b",
        re.IGNORECASE,
    ),
    "system_prompt_marker": re.compile(
        r"<\|(?:im_start|im_end|system|user|assistant|endoftext)\|>|\[/?INST\]|<</?SYS>>|"
        r"</?system>|#{1,6}[ \t]*system[ \t]+prompt\b|"
        r"\b(?:begin|end)[ \t]+(?:system|admin)[ \t]+(?:prompt|instructions?)\b",
        re.IGNORECASE,
    ),
    "verdict_object": re.compile(r"[\"']is_correct[\"']\s*:\s*true\b", re.IGNORECASE),
}
"""Instructions to the simulator or the judge, by rule name."""

TRANSCRIPT_MARKERS: dict[str, re.Pattern[str]] = {
    "paper_transcript": re.compile(
        r"\[(?:Agent Action|Environment Observation|Agent Response)\]", re.IGNORECASE
    ),
    "occubench_turn": re.compile(
        r"\{\s*\"role\"\s*:\s*\"(?:call|observation|tool_error|agent|user)\"", re.IGNORECASE
    ),
    "harness_tag": re.compile(
        r"</?(?:observation|predicted_observation|trajectory|final_answer|verification_plan|"
        r"tool_result|tool_output|function_results?|agent_action|state_patch)>",
        re.IGNORECASE,
    ),
    "tool_call_record": re.compile(r"\"(?:tool_calls?|function_call)\"\s*:", re.IGNORECASE),
}
"""Imitations of a transcript (the harness's, the judge's or a tool-call API's), by rule name."""

SUCCESS_FLAGS = frozenset(
    {
        "success",
        "succeeded",
        "passed",
        "approved",
        "task_completed",
        "task_complete",
        "completed",
        "done",
        "is_correct",
        "verified",
        "task_passed",
    }
)
"""Keys whose value ``true`` reports success."""
STATUS_KEYS = frozenset({"status", "result", "outcome", "state", "verdict"})
"""Keys whose value, one of ``SUCCESS_WORDS``, reports success."""
SUCCESS_WORDS = frozenset(
    {"success", "succeeded", "successful", "passed", "approved", "completed", "complete", "done"}
)
"""Values of a status key that report success."""

_MAX_DEPTH = 12
_MAX_LEAVES = 2_000


def scanned(text: str) -> str:
    """The part of a text the guard reads (``DEFAULT_EXPLOIT_SCAN_CHARS``)."""
    return text[:DEFAULT_EXPLOIT_SCAN_CHARS]


def find(rules: dict[str, re.Pattern[str]], text: str) -> Iterator[tuple[str, str]]:
    """(rule, sentence around the match) for the first match of each rule in ``text``."""
    read = scanned(text)
    for name, pattern in rules.items():
        found = pattern.search(read)
        if found is not None:
            yield name, sentence(read, found.start(), found.end())


_SENTENCE_END = re.compile(r"[.!?\n]")


def sentence(text: str, start: int, end: int, reach: int = 200) -> str:
    """The sentence (or line) around ``text[start:end]``, at most ``reach`` characters each side."""
    before = text[max(0, start - reach) : start]
    stops = [m.end() for m in _SENTENCE_END.finditer(before)]
    first = max(0, start - reach) + (stops[-1] if stops else 0)
    after = _SENTENCE_END.search(text, end, min(len(text), end + reach))
    last = after.end() if after else min(len(text), end + reach)
    return text[first:last].strip()


def string_leaves(value: Any, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) of every string in a JSON value (keys included), bounded in depth and count."""
    count = 0

    def walk(node: Any, where: str, depth: int) -> Iterator[tuple[str, str]]:
        nonlocal count
        if count >= _MAX_LEAVES or depth > _MAX_DEPTH:
            return
        if isinstance(node, str):
            count += 1
            yield where, node
        elif isinstance(node, dict):
            for key, item in node.items():
                inner = f"{where}.{key}" if where else str(key)
                count += 1
                yield inner, str(key)
                yield from walk(item, inner, depth + 1)
        elif isinstance(node, list):
            for i, item in enumerate(node):
                yield from walk(item, f"{where}[{i}]", depth + 1)

    yield from walk(value, path, 0)


def _pair(key: Any, value: Any) -> tuple[str, str]:
    """A key and its value as compared: case-folded text."""
    shown = value if isinstance(value, str) else json.dumps(value)
    return str(key).casefold(), shown.strip().casefold()


def _children(node: Any) -> Iterable[tuple[Any, Any]]:
    """(key, item) of an object, (index, item) of a list, nothing of a scalar."""
    if isinstance(node, dict):
        return node.items()
    if isinstance(node, list):
        return enumerate(node)
    return ()


def given_pairs(arguments: Any) -> set[tuple[str, str]]:
    """The (key, value) pairs of a call's arguments, at any depth (``reports_success``)."""
    pairs: set[tuple[str, str]] = set()

    def walk(node: Any, depth: int) -> None:
        if depth > _MAX_DEPTH:
            return
        for key, item in _children(node):
            if isinstance(item, dict | list):
                walk(item, depth + 1)
            else:
                pairs.add(_pair(key, item))

    walk(arguments, 0)
    return pairs


def success_reports(
    value: Any, given: AbstractSet[tuple[str, str]] = frozenset()
) -> list[tuple[str, str]]:
    """(key path, success word) of each place a JSON observation reports success, in order.

    Success is a key of ``SUCCESS_FLAGS`` set to ``true`` (its word: the key), or a key of
    ``STATUS_KEYS`` whose text is one of ``SUCCESS_WORDS`` (any case; its word: the text).
    A key and value the call's own arguments hold (``given``: ``given_pairs``) is the
    agent's word repeated, not a success the observation reports. List items share a path
    (``items[].status``); words are case-folded.
    """
    found: list[tuple[str, str]] = []

    def walk(node: Any, where: str, depth: int) -> None:
        if depth > _MAX_DEPTH or len(found) >= _MAX_LEAVES:
            return
        for key, item in _children(node):
            inner = f"{where}.{key}" if isinstance(key, str) else f"{where}[]"
            name = str(key).casefold()
            if _pair(key, item) not in given:
                if name in SUCCESS_FLAGS and item is True:
                    found.append((inner.lstrip("."), name))
                elif name in STATUS_KEYS and isinstance(item, str):
                    word = item.strip().casefold()
                    if word in SUCCESS_WORDS:
                        found.append((inner.lstrip("."), word))
            walk(item, inner, depth + 1)

    walk(value, "", 0)
    return list(dict.fromkeys(found))


def success_paths(value: Any, given: AbstractSet[tuple[str, str]] = frozenset()) -> list[str]:
    """The key paths at which a JSON observation reports success (``success_reports``)."""
    return list(dict.fromkeys(path for path, _ in success_reports(value, given)))


def asked_words(arguments: Any, wanted: Iterable[str]) -> str | None:
    """The text of a call's arguments that holds one of ``wanted`` words (None: none does).

    The arguments' keys and string values are read word by word (case-folded, as
    ``words`` splits them): an agent that writes the success it wants ("status
    success", a ``task_completed`` key, a forged result) names it in its own call.
    """
    want = set(wanted)
    for path, text in string_leaves(arguments):
        if want & set(words(text)):
            return f"{path}: {text}" if path and path != text else text
    return None


_WORD = re.compile(r"\w+")


def words(text: str) -> list[str]:
    """The words of a text, case-folded (punctuation and spacing dropped)."""
    return _WORD.findall(scanned(text).casefold())


def lifted(source: str, target: str, run: int = DEFAULT_EXPLOIT_LIFT_WORDS) -> str | None:
    """The longest run of at least ``run`` consecutive words of ``source`` found in ``target``.

    Words are compared case-folded, without punctuation; None when no such run exists.
    """
    said, heard = words(source), words(target)
    if len(said) < run or len(heard) < run:
        return None
    shingles = {tuple(heard[i : i + run]) for i in range(len(heard) - run + 1)}
    joined = " " + " ".join(heard) + " "
    best: list[str] = []
    for i in range(len(said) - run + 1):
        if tuple(said[i : i + run]) not in shingles:
            continue
        end = i + run
        while end < len(said) and f" {' '.join(said[i : end + 1])} " in joined:
            end += 1
        if end - i > len(best):
            best = said[i:end]
    return " ".join(best) if best else None

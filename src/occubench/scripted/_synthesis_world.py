"""A scripted world for the synthesis pipeline: generator, plan-following agent, simulator.

Together they let ``occubench synth`` run offline (tests, demo) and exercise every branch
of the funnel. They read only what real models would see.

- ``scripted-generator`` answers each stage prompt (keyed on its ``# Stage:`` heading)
  with valid JSON. Each sub-topic gets a *profile*, written into its summary as
  ``[profile: NAME]`` so that later stages (which are shown the sub-topic) can read it:

  - ``good``: a records system with three tools; level 1 needs one lookup, level 2 a
    lookup then an update, level 3 lookup, update, notify, in that order;
  - ``hard``: the same env; levels need 2 and 3 calls in order, and level 3 also forbids
    the notification;
  - ``trivial``: every level needs only the lookup;
  - ``repairable``: as ``good``, but the initial state lacks the record the tasks are
    about; a repair adds it;
  - ``unsolvable``: as ``repairable``, but the repair adds the wrong record;
  - ``invalid``: the env has a duplicate tool and a schema with an unknown type.

  Profiles cycle over the sub-topics of a scenario (``-M profiles=[...]``, or a mapping
  from scenario name to a list), starting at an offset derived from the scenario name.
  On the conversion stage it reads the task's request and leaves out its first
  identifier (letters and digits joined by hyphens, e.g. ``PAT-777``), else its first
  quoted name, else its first number: that value becomes the user's one fact, and the
  opening is the request's first sentence with every mention of it replaced.
- ``plan-agent`` follows the plan when it is given one (``N. Call TOOL with {...}.``
  lines). Without a plan it calls every tool once, in an order rotated by one on each
  new attempt at the same instruction (attempts are counted per model instance): its
  autonomous success rate on an order check is a fraction of the runs, as for a real
  model sampled at a temperature.
- ``state-simulator`` answers from the initial state in its system prompt: an
  ``*_id`` argument naming no record of the state is an error, otherwise the matching
  record is returned. It does not apply updates.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolInfo

from occubench.agent import PLAN_MARKERS
from occubench.dataset import example_arguments
from occubench.errors import UsageError
from occubench.scripted._reply import Behaviour, Reply
from occubench.scripted._simulated import last_action, observation_reply

GOOD, HARD, TRIVIAL = "good", "hard", "trivial"
REPAIRABLE, UNSOLVABLE, INVALID = "repairable", "unsolvable", "invalid"
PROFILES = (GOOD, REPAIRABLE, INVALID, UNSOLVABLE, HARD, TRIVIAL)
"""Every profile, in the default cycle order."""

RECORD = {"record_id": "REC-7", "owner": "Dana Ortiz", "status": "open", "amount": 1240}
OTHER_RECORD = {"record_id": "REC-3", "owner": "Sam Lee", "status": "closed", "amount": 310}
WRONG_FIX = {"record_id": "REC-8", "owner": "Ari Cole", "status": "open", "amount": 95}
LOOKUP, UPDATE, NOTIFY = "lookup_record", "update_record", "notify_party"

_STAGE = re.compile(r"^# Stage: (.+)$", re.MULTILINE)
_PROFILE = re.compile(r"\[profile: (\w+)\]")
_COUNT = re.compile(r"Number of sub-topics: (\d+)")
_WITHHELD = (
    re.compile(r"\b[A-Z][A-Z0-9]*(?:-[A-Z0-9]+)*-[A-Z0-9]*\d[A-Z0-9]*\b"),  # an id: PAT-777
    re.compile(r"'([^'\n]{3,60})'"),  # a quoted name
    re.compile(r"\d[\d,.]*\d"),  # a number of two digits or more
)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_PLAN_CALL = re.compile(r"^\s*\d+\.\s*Call\s+`?(\w+)`?\s+with\s+(\{.*\})", re.MULTILINE)


def json_block(text: str, tag: str) -> Any:
    """The JSON content of ``<tag>...</tag>`` in a prompt (None when absent)."""
    found = re.search(rf"<{tag}>\s*(.*?)\s*</{tag}>", text, re.DOTALL)
    return json.loads(found.group(1)) if found else None


def _json_reply(value: Any) -> Reply:
    return Reply(content="<json>\n" + json.dumps(value, indent=1) + "\n</json>")


def _tool(name: str, description: str, properties: dict[str, Any], output: Any) -> dict[str, Any]:
    return {
        "name": name,
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(properties)},
        "example_output": output,
    }


def scripted_env(role: str, title: str, profile: str) -> dict[str, Any]:
    """The env config the scripted generator writes for a sub-topic of ``profile``."""
    record_id = {"type": "string", "description": "Record identifier.", "examples": ["REC-7"]}
    tools = [
        _tool(LOOKUP, "Read one record.", {"record_id": record_id}, RECORD),
        _tool(
            UPDATE,
            "Set the status of a record.",
            {
                "record_id": record_id,
                "status": {
                    "type": "string",
                    "description": "New status.",
                    "enum": ["closed", "open", "on_hold"],
                },
            },
            {"record_id": "REC-7", "status": "closed"},
        ),
        _tool(
            NOTIFY,
            "Send a message to a party of the case.",
            {
                "recipient": {"type": "string", "description": "Who.", "examples": ["case owner"]},
                "message": {"type": "string", "description": "What.", "examples": ["Done."]},
            },
            {"sent": True},
        ),
    ]
    if profile == INVALID:
        tools += [
            _tool(LOOKUP, "A second tool with the same name.", {"record_id": record_id}, RECORD),
            _tool(
                "archive_record",
                "Archive records older than a number of days.",
                {"days": {"type": "int", "description": "Age in days."}},
                {"archived": 3},
            ),
        ]
    records = [OTHER_RECORD] if profile in (REPAIRABLE, UNSOLVABLE) else [RECORD, OTHER_RECORD]
    return {
        "environment_name": "records_desk",
        "world_model_system_prompt": (
            f"You simulate the case records system a {role} uses for '{title}'. Records are "
            "found by record_id; an unknown record_id returns an error. Updates change the "
            "record's status. Notifications are sent to the named recipient."
        ),
        "action_set_definitions": tools,
        "task_initial_state": {"records": records},
        "state_description": {"records": "Case records: id, owner, status, amount in USD."},
    }


def _call(tool: str) -> dict[str, Any]:
    arguments = {
        LOOKUP: {"record_id": "REC-7"},
        UPDATE: {"record_id": "REC-7", "status": "closed"},
        NOTIFY: {"recipient": "case owner", "message": "Done."},
    }[tool]
    return {"tool": tool, "arguments": arguments}


def _task(level: int, title: str, calls: list[str], checks: list[dict[str, Any]]) -> dict[str, Any]:
    steps = [_call(t) for t in calls]
    plan = "\n".join(
        f"{n}. Call {s['tool']} with {json.dumps(s['arguments'])}." for n, s in enumerate(steps, 1)
    )
    return {
        "difficulty_level": level,
        "agent_instruction": (
            f"[{title}, level {level}] Handle record REC-7: "
            + ", then ".join(calls)
            + ". Report who owns the record."
        ),
        "solution_plan": plan + "\nAnswer: the owner of REC-7 and what was done.",
        "plan_calls": steps,
        "verification_plan": "1. The agent read REC-7.\n2. The answer names the owner.",
        "checks": [*checks, {"kind": "answer_contains", "values": [RECORD["owner"]]}],
    }


def scripted_tasks(title: str, profile: str) -> list[dict[str, Any]]:
    """The three tasks the scripted generator writes for an env of ``profile``."""
    Level = tuple[list[str], list[dict[str, Any]]]  # the plan's calls, the checks
    one: Level = (
        [LOOKUP],
        [{"kind": "tool_called", "tool": LOOKUP, "arguments": {"record_id": "REC-7"}}],
    )
    two: Level = ([LOOKUP, UPDATE], [{"kind": "order", "tools": [LOOKUP, UPDATE]}])
    all_three = [LOOKUP, UPDATE, NOTIFY]
    three: Level = (all_three, [{"kind": "order", "tools": all_three}])
    quiet: Level = ([LOOKUP, UPDATE], [*two[1], {"kind": "tool_not_called", "tool": NOTIFY}])
    by_profile: dict[str, list[Level]] = {TRIVIAL: [one, one, one], HARD: [two, three, quiet]}
    levels = by_profile.get(profile, [one, two, three])
    return [_task(n, title, calls, checks) for n, (calls, checks) in enumerate(levels, start=1)]


def scripted_conversion(task: dict[str, Any]) -> dict[str, Any]:
    """The scripted generator's conversion of a task (see the module docstring)."""
    request = str(task.get("agent_instruction", ""))
    found = next((m for pattern in _WITHHELD if (m := pattern.search(request))), None)
    if found is None:
        return {"opening": request, "user": {}}  # nothing to withhold: re-asked, then dropped
    value = found.group(found.re.groups)
    kind = ("reference", "name", "figure")[_WITHHELD.index(found.re)]
    opening = _SENTENCE_END.split(request.strip())[0]
    opening = re.sub(re.escape(value), f"the {kind} I will give you", opening, flags=re.I)
    scenario = task.get("task_scenario_name", "this work")
    return {
        "opening": opening,
        "user": {
            "persona": f"A client who needs help with {scenario} and has the details at hand.",
            "goal": f"Have the request done for {value} and hear the result.",
            "facts": [
                {
                    "name": kind,
                    "value": value,
                    "reveal_when": f"the agent asks for the {kind} the request is about",
                }
            ],
            "ends_when": "the agent has given the answer the request asks for",
        },
    }


class ScriptedGenerator:
    """The ``scripted-generator`` model (see the module docstring)."""

    def __init__(self, profiles: list[str] | Mapping[str, list[str]] | None = None) -> None:
        self.profiles = profiles

    def profile(self, scenario: str, index: int) -> str:
        """The profile of sub-topic ``index`` (0-based) of ``scenario``."""
        if isinstance(self.profiles, Mapping):
            cycle, offset = list(self.profiles.get(scenario) or PROFILES), 0
        else:
            cycle = list(self.profiles or PROFILES)
            offset = 0 if self.profiles else int(hashlib.sha256(scenario.encode()).hexdigest(), 16)
        unknown = sorted(set(cycle) - set(PROFILES))
        if unknown:
            raise UsageError(f"unknown profiles {unknown}; known: {', '.join(PROFILES)}")
        return cycle[(offset + index) % len(cycle)]

    def __call__(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        """Answer the stage prompt of the conversation (its first user message)."""
        prompt = next(m.text for m in messages if isinstance(m, ChatMessageUser))
        stage = _STAGE.search(prompt)
        name = stage.group(1) if stage else ""
        scenario = json_block(prompt, "scenario") or {}
        subtopic = json_block(prompt, "subtopic") or {}
        found = _PROFILE.search(subtopic.get("summary", ""))
        profile = found.group(1) if found else GOOD
        count = _COUNT.search(prompt)
        if name.startswith("sub-topics") and count:
            return _json_reply(self.plan(scenario, int(count.group(1))))
        if name.startswith("environment"):
            return _json_reply(scripted_env(scenario["role"], subtopic["title"], profile))
        if name.startswith("tasks"):
            return _json_reply({"tasks": scripted_tasks(subtopic["title"], profile)})
        if name.startswith("conversion"):
            return _json_reply(scripted_conversion(json_block(prompt, "task") or {}))
        if name.startswith("repair"):
            env = json_block(prompt, "environment")
            added = RECORD if profile == REPAIRABLE else WRONG_FIX
            env["task_initial_state"]["records"].append(added)
            return _json_reply(
                {
                    "diagnosis": "impossible_state",
                    "explanation": f"The state lacked the record; added {added['record_id']}.",
                    "config": env,
                    "task": None,
                }
            )
        return Reply(content="I do not know this stage.")

    def plan(self, scenario: dict[str, Any], count: int) -> dict[str, Any]:
        """Sub-topics (with their profiles) and a reference document."""
        role = scenario.get("role", "professional")
        return {
            "subtopics": [
                {
                    "title": f"{scenario['name']} area {i + 1}",
                    "summary": f"Records a {role} handles. [profile: "
                    f"{self.profile(scenario['name'], i)}]",
                }
                for i in range(count)
            ],
            "reference": {
                "terminology": [{"term": "record", "definition": "One case in the system."}],
                "workflow": ["Look the record up.", "Update it.", "Notify the owner."],
                "state_variables": [{"name": "records", "description": "Cases by id."}],
                "edge_cases": ["The record does not exist."],
                "constraints": ["Read a record before changing it."],
            },
        }


def _plan_calls(instruction: str, tools: list[str]) -> list[tuple[str, dict[str, Any]]]:
    marker = next((m for m in PLAN_MARKERS if m in instruction), None)
    if marker is None:
        return []
    plan = instruction.split(marker, 1)[1]
    return [(tool, json.loads(args)) for tool, args in _PLAN_CALL.findall(plan) if tool in tools]


def _report(messages: list[ChatMessage]) -> Reply:
    lines = [
        f"- {m.function}: {m.error.message if m.error else m.text}"
        for m in messages
        if isinstance(m, ChatMessageTool)
    ]
    return Reply(content="Final answer. What the environment reported:\n" + "\n".join(lines))


class PlanAgent:
    """The ``plan-agent`` model (see the module docstring)."""

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}

    def __call__(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
        """The next call of the plan (or of this attempt's tool order), then the report."""
        instruction = next((m.text for m in messages if isinstance(m, ChatMessageUser)), "")
        names = [t.name for t in tools]
        done = sum(isinstance(m, ChatMessageTool) for m in messages)
        sequence = _plan_calls(instruction, names)
        if not sequence and tools:
            first = next(
                (
                    m.tool_calls[0].function
                    for m in messages
                    if isinstance(m, ChatMessageAssistant) and m.tool_calls
                ),
                None,
            )
            if first in names:
                shift = names.index(first)
            else:
                shift = self.attempts.get(instruction, 0) % len(tools)
                self.attempts[instruction] = self.attempts.get(instruction, 0) + 1
            rotated = tools[shift:] + tools[:shift]
            sequence = [
                (t.name, example_arguments(t.parameters.model_dump(exclude_none=True)))
                for t in rotated
            ]
        if done < len(sequence):
            return Reply(tool_calls=[sequence[done]])
        return _report(messages)


_STATE = re.compile(r"### Initial state\n```json\n(.*?)\n```", re.DOTALL)


def _find_record(value: Any, key: str, wanted: str) -> dict[str, Any] | None:
    if isinstance(value, dict):
        if value.get(key) == wanted:
            return value
        value = list(value.values())
    if isinstance(value, list):
        for item in value:
            found = _find_record(item, key, wanted)
            if found is not None:
                return found
    return None


def state_simulator(messages: list[ChatMessage], tools: list[ToolInfo]) -> Reply:
    """The record an action's ``*_id`` arguments name, or a not-found error."""
    system = next((m.text for m in messages if isinstance(m, ChatMessageSystem)), "")
    found = _STATE.search(system)
    state = json.loads(found.group(1)) if found else None
    action = last_action(messages)
    arguments = action.arguments
    observation: dict[str, Any] = {"status": "ok", "action": action.name, "arguments": arguments}
    for key, value in arguments.items():
        if state is None or not key.endswith("_id") or not isinstance(value, str):
            continue
        record = _find_record(state, key, value)
        if record is None:
            observation = {"status": "error", "error": f"no record with {key} {value}"}
            break
        observation["record"] = record
    return Reply(content=observation_reply(messages, observation))


SYNTHESIS_MODELS: dict[str, Callable[..., Behaviour]] = {
    "scripted-generator": ScriptedGenerator,
    "plan-agent": PlanAgent,
    "state-simulator": lambda: state_simulator,
}
"""Scripted models of the synthesis world by name, as factories of model arguments
(``occubench/<name>``; each model instance gets its own behaviour)."""

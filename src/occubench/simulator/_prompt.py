"""The simulator's messages: a fixed system prompt, then the history appended.

Rendering of release prompts: every ``world_model_system_prompt`` of the public
release still holds the doubled braces of an unformatted template (``{{ }}``) in its
body and in the appended ``{{initial_state}}:`` and ``{{state_descriptions}}:``
sections, while the appended ``{action_set_definitions}:`` section is plain JSON
with single braces. We never call ``str.format`` (the JSON would break). The prompt
is cut into sections at those label lines, and in each section where every run of
braces has even length each run is halved, which is what formatting the template
would have shown; a section with any odd run (plain JSON, or text written by hand)
is left as it is.

Prefix stability: the system message depends only on the env config, the date and
the fault engine, never on the step, and each step appends one user message (the
action) and one assistant message (the observation). Every simulator prompt of a
task is therefore an exact prefix of the next one, so provider prompt caches hit.
"""

from __future__ import annotations

import json
import re
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageUser

from occubench.dataset import EnvConfig

_BRACE_RUN = re.compile(r"\{+|\}+")
_SECTION_LABEL = re.compile(r"(?m)^(?=\{+[A-Za-z_]+\}+:)")

OUTPUT_CONTRACT = """

### Reply format (fixed by the harness)
- Today's date in this environment is {date}.
- Each user message is one action: a JSON object with "name" (the action) and "arguments".
- Reply with the observation of that action only: one JSON object inside
  <observation></observation> tags, and nothing else.
- An earlier observation marked "harness_note": "failed" was an error raised before
  the action reached the environment: that action had no effect on the state.
"""

CANNED_SECTION = """

### Known observations
When an action matches one of these exactly (same name, same arguments), reply with its
observation unchanged:
<canned_observations>
{canned}
</canned_observations>"""


SIM_CHECK_CONTRACT = """
### Checked observations (fixed by the harness)
- An action may carry "harness_check": a problem the harness found in your previous
  observation of that same action (it contradicts the configuration or earlier
  observations). Reply to the action again, with an observation that fixes the problem
  and stays consistent with the state and the history.
"""
"""Appended to the simulator's system prompt when the online simulator checks are on."""


def normalize_braces(text: str) -> str:
    """Halve the brace runs of every section whose runs all have even length (module doc)."""
    return "".join(_halve(section) for section in _SECTION_LABEL.split(text))


def _halve(section: str) -> str:
    runs = _BRACE_RUN.findall(section)
    if not runs or any(len(run) % 2 for run in runs):
        return section
    return _BRACE_RUN.sub(lambda m: m.group(0)[: len(m.group(0)) // 2], section)


_STATE_LABEL = re.compile(r"(?m)^(?:\{\{initial_state\}\}:\s*\{\{|\{initial_state\}:\s*\{)")
"""The release's label line before the embedded initial state: ``{{initial_state}}: {{``
at the start of a line (or, in a prompt whose braces were already halved,
``{initial_state}: {``), the state's JSON object opening after it."""


def embeds_state(prompt: str) -> bool:
    """Whether a prompt already carries its initial state after the release's label line.

    Only that exact label line counts: a prompt that mentions ``{initial_state}`` in
    its text, even at the start of a line, does not hold the state.
    """
    return _STATE_LABEL.search(prompt) is not None


def state_sections(env: EnvConfig) -> str:
    """What the simulator is shown beyond the env's own prompt ("" for release prompts).

    A prompt without the release's embedded state gets the initial state, the state
    description and the tools appended; an env with known observations (an occubench
    extension) gets them listed.
    """
    sections = ""
    if not embeds_state(env.world_model_system_prompt):
        tools = [t.model_dump(mode="json", exclude_none=True) for t in env.action_set_definitions]
        sections += (
            "\n\n### Initial state\n```json\n"
            + json.dumps(env.task_initial_state, indent=2, ensure_ascii=False)
            + "\n```\n\n### State description\n```json\n"
            + json.dumps(env.state_description, indent=2, ensure_ascii=False)
            + "\n```\n\n### Actions\n```json\n"
            + json.dumps(tools, indent=2, ensure_ascii=False)
            + "\n```"
        )
    if env.canned_observations:
        canned = [c.model_dump(mode="json") for c in env.canned_observations]
        sections += CANNED_SECTION.format(canned=json.dumps(canned, indent=1, ensure_ascii=False))
    return sections


def render_system_prompt(env: EnvConfig, *, date: str, extra_rules: str = "") -> str:
    """The simulator's system prompt for ``env`` in occubench's layout.

    Release prompts already carry the initial state, state description and tools at
    their end; for a prompt that does not, these sections are appended
    (``state_sections``); brace runs are halved (``normalize_braces``).
    """
    prompt = normalize_braces(env.world_model_system_prompt) + state_sections(env)
    prompt += OUTPUT_CONTRACT.format(date=date)
    if extra_rules:
        prompt += "\n" + extra_rules.strip() + "\n"
    return prompt


def action_message(tool: str, arguments: dict[str, Any]) -> ChatMessageUser:
    """The user message that submits one action to the simulator."""
    return ChatMessageUser(
        content=json.dumps({"name": tool, "arguments": arguments}, ensure_ascii=False)
    )


def reask_action(action: str, problem: str) -> str:
    """The action text of a checked re-ask: the action (JSON text) with the problem named.

    The re-ask adds ``"harness_check"`` to the action (see ``SIM_CHECK_CONTRACT``).
    """
    return json.dumps({**json.loads(action), "harness_check": problem}, ensure_ascii=False)


def observation_message(text: str) -> ChatMessage:
    """The history entry (an assistant message) for an action's outcome (JSON text)."""
    return ChatMessageAssistant(content=f"<observation>{text}</observation>")


def failed_observation(observation: Any) -> Any:
    """An explicit fault's error as the history keeps it: marked ``"harness_note": "failed"``.

    The mark tells the simulator the action never reached the environment, so it keeps
    the state as it was; the agent never sees it.
    """
    if isinstance(observation, dict):
        return {**observation, "harness_note": "failed"}
    return {"error": observation, "harness_note": "failed"}

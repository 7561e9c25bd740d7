"""The generator's prompts: readable files in ``prompts/``, filled with ``string.Template``.

A prompt file is markdown holding ``$name`` variables (``$$`` is a literal dollar).
``string.Template`` leaves braces alone, so the JSON output schemas in the files need no
escaping; ``str.format`` is never used.
"""

from __future__ import annotations

import json
from importlib import resources
from string import Template
from typing import Any

PROMPTS_PACKAGE = "occubench.synthesis"
PROMPTS_DIR = "prompts"

SYSTEM = "system"
REASK = "reask"
SUBTOPICS = "subtopics"
ENVIRONMENT = "environment"
TASKS = "tasks"
REPAIR = "repair"
CONVERSE = "converse"
PROMPT_NAMES = (SYSTEM, REASK, SUBTOPICS, ENVIRONMENT, TASKS, REPAIR, CONVERSE)


def prompt_template(name: str) -> Template:
    """The template of prompt ``name`` (the file ``prompts/<name>.md``)."""
    if name not in PROMPT_NAMES:
        raise ValueError(f"unknown prompt {name!r}; known: {', '.join(PROMPT_NAMES)}")
    path = resources.files(PROMPTS_PACKAGE).joinpath(PROMPTS_DIR, f"{name}.md")
    return Template(path.read_text(encoding="utf-8"))


def render_prompt(name: str, **values: Any) -> str:
    """Fill prompt ``name``; every variable must be given (a missing one raises KeyError)."""
    return prompt_template(name).substitute({k: str(v) for k, v in values.items()})


def as_json(value: Any) -> str:
    """A value as indented JSON, for a prompt's data block (pydantic models are dumped)."""
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json", exclude_none=True)
    return json.dumps(value, indent=2, ensure_ascii=False)

"""``occubench env check``: every problem of a dataset folder at once, and each env's size.

The dataset's own check (``occubench.dataset.check_dataset``: files, fields, tool schemas
as Inspect builds them, tools a task names, state against its description, placeholders
left, each problem with its file, line and field), then per env what a run will send: the
simulator's system prompt under the run's protocol and settings, and the agent's tool
definitions, in approximate tokens (``occubench.calls``). A simulator prompt larger than
``LARGE_PROMPT_TOKENS`` is a warning: every simulator call of every sample sends it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from occubench.agent import simulator_prompt
from occubench.calls import approx_tokens, prompt_tokens
from occubench.config import ResolvedRun, RunConfig
from occubench.dataset import DatasetIssue, EnvConfig, check_dataset, tool_info

LARGE_PROMPT_TOKENS = 32_000
"""A simulator prompt above this many (approximate) tokens is a warning."""


class EnvSize(BaseModel):
    """What one env weighs in every call a run makes."""

    env: str = Field(description="The env's name.")
    tools: int = Field(description="Its tools.")
    tasks: int = Field(description="Tasks set in it.")
    prompt_chars: int = Field(description="Characters of the simulator's system prompt.")
    prompt_tokens: int = Field(description="Its approximate tokens (four characters a token).")
    tool_tokens: int = Field(
        description="Approximate tokens of the tool definitions the agent gets."
    )


class EnvCheck(BaseModel):
    """The check of a dataset folder."""

    root: str = Field(description="The folder checked.")
    tasks: int = Field(description="Task lines that validate.")
    problems: list[DatasetIssue] = Field(description="What must be fixed before a run.")
    warnings: list[DatasetIssue] = Field(description="What a run survives, but may not want.")
    sizes: list[EnvSize] = Field(description="Each env that validates, with its sizes.")

    @property
    def ok(self) -> bool:
        """No problem found."""
        return not self.problems


def check_envs(root: str | Path, config: RunConfig | None = None) -> EnvCheck:
    """Check the folder ``root`` (module doc); ``config`` sets the protocol and settings."""
    run = ResolvedRun.of(config or RunConfig())
    found = check_dataset(root)
    warnings = list(found.warnings)
    sizes = []
    for name, env in sorted(found.envs.items()):
        prompt = simulator_prompt(run, env)
        size = EnvSize(
            env=name,
            tools=len(env.action_set_definitions),
            tasks=len(found.tasks_of(name)),
            prompt_chars=len(prompt),
            prompt_tokens=approx_tokens(prompt),
            tool_tokens=_tool_tokens(env, run.points.validate_tool_args),
        )
        sizes.append(size)
        if size.prompt_tokens > LARGE_PROMPT_TOKENS:
            warnings.append(
                DatasetIssue(
                    file=str(found.env_path(name)),
                    field="world_model_system_prompt",
                    message=f"the simulator's system prompt is about {size.prompt_tokens} "
                    f"tokens (over {LARGE_PROMPT_TOKENS}): every simulator call sends it",
                )
            )
    return EnvCheck(
        root=str(found.root),
        tasks=len(found.tasks),
        problems=found.issues,
        warnings=warnings,
        sizes=sizes,
    )


def _tool_tokens(env: EnvConfig, fill: bool) -> int:
    """Tokens of the env's tool definitions as the agent gets them (those Inspect accepts)."""
    tools = []
    for spec in env.action_set_definitions:
        try:
            tools.append(tool_info(spec, fill=fill))
        except ValueError:
            continue  # a schema Inspect refuses: a problem the check reports
    return prompt_tokens([], tools)

"""What ``occubench serve`` runs: the served task's configuration, its arguments, its log folder.

The session itself is the ``occubench/serve`` task (``mcp_session``), run through the one
runner; this module prepares what the runner is given.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from occubench.agent import open_run_world
from occubench.config import EvalOptions, RunConfig
from occubench.dataset import EnvConfig
from occubench.errors import UsageError
from occubench.roles import Role
from occubench.serving._choices import DEFAULT_LINGER, Transport, Unsubmitted
from occubench.serving._serve import serve_token

SERVE_TASK = "occubench/serve"
"""Registry name of the serving task (``occubench.task.serve``)."""


@dataclass(frozen=True)
class ServeOptions:
    """How a session is served: its models, and the ``occubench/serve`` task's own arguments."""

    simulator: str
    verifier: str | None = None
    transport: Transport = Transport.STDIO
    host: str = "127.0.0.1"
    port: int = 0
    unsubmitted: Unsubmitted = Unsubmitted.GRADE
    session_limit: float | None = None
    linger: float = DEFAULT_LINGER
    allowed_hosts: list[str] = field(default_factory=list)

    def check_token(self) -> None:
        """Over HTTP, refuse a bad ``$OCCUBENCH_SERVE_TOKEN`` before anything starts.

        Raises:
            UsageError: the token in the environment is not one a client can send.
        """
        if self.transport is Transport.HTTP:
            serve_token()

    def roles(self) -> dict[Role, str]:
        """The model of each role (the MCP client is the agent)."""
        return {
            Role.SIMULATOR: self.simulator,
            **({Role.VERIFIER: self.verifier} if self.verifier else {}),
        }

    def eval_options(self) -> EvalOptions:
        """How the session's eval runs: no retry (a client's session cannot be replayed)."""
        return EvalOptions(retry_on_error=0)

    def task_args(self, config: RunConfig) -> dict[str, Any]:
        """The serve task's keyword arguments: the run's configuration and these options."""
        return {
            **config.task_args(),
            "transport": self.transport.value,
            "host": self.host,
            "port": self.port,
            "unsubmitted": self.unsubmitted.value,
            "session_limit": self.session_limit,
            "linger": self.linger,
            "allowed_hosts": self.allowed_hosts,
        }


def served_task(config: RunConfig, task_id: int) -> tuple[RunConfig, list[EnvConfig]]:
    """A session's configuration (selecting ``task_id``), its dataset path made absolute.

    Returns the configuration and the environments of its task.

    Raises:
        UsageError: no such task in the dataset.
        DatasetError: the dataset does not load.
    """
    config = config.model_copy(update={"dataset": str(config.dataset_dir().resolve())})
    loaded = config.load_tasks()
    if not loaded.tasks:
        raise UsageError(f"no task {task_id} in {config.dataset}")
    return config, [loaded.envs[task.env_name] for task in loaded.tasks]


def served_world(config: RunConfig) -> RunConfig:
    """The configuration with its world's path made absolute, once the world opens as asked.

    Raises:
        UsageError: a world that cannot be used in its mode (``open_run_world``).
    """
    if config.world is not None:
        config = config.model_copy(update={"world": str(Path(config.world).expanduser().resolve())})
    open_run_world(config)
    return config


def session_log_dir(root: str, task_id: int, env_mode: str) -> str:
    """A new folder under ``root`` for one session (a session is never resumed)."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{root.rstrip('/')}/task-{task_id}-{env_mode}-{stamp}"

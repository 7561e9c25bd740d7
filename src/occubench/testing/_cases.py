"""One run's three roles on one provider's own API, offline: the wire cases.

Each case names a strict local server (``occubench.testing``), the variables Inspect reads
to reach it, a model per role in Inspect's spelling (names like the paper's models, each
answered by a scripted behaviour: the agent ``schema-agent``, the simulator
``echo-simulator``, the verifier ``scripted-judge``) and the generation settings that
turn the agent's reasoning on where the wire has it. ``tests/agent/test_wire_matrix.py``
runs every case under both protocols in E0 and E3; ``benchmarks/wire_matrix.py`` prints
the table.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import NamedTuple

from occubench.roles import Role
from occubench.scripted import BEHAVIOURS, Behaviour
from occubench.testing._anthropic_server import AnthropicServer
from occubench.testing._google_server import GoogleServer
from occubench.testing._reasoning_chat_server import ReasoningChatServer
from occubench.testing._responses_server import ResponsesServer
from occubench.testing._server import WireServer

CASE_API_KEY = "test-key"
"""The key every case's server accepts."""

ROLE_BEHAVIOURS = {
    Role.AGENT: "schema-agent",
    Role.SIMULATOR: "echo-simulator",
    Role.VERIFIER: "scripted-judge",
}
"""The scripted behaviour that answers each role."""


class WireName(str, Enum):  # noqa: UP042 - the project's str-Enum style
    """The wires the cases cover."""

    ANTHROPIC = "anthropic"
    GOOGLE = "google"
    OPENAI_RESPONSES = "openai-responses"
    DEEPSEEK_CHAT = "deepseek-chat"


class WireCase(NamedTuple):
    """One wire: its server, how Inspect reaches it, its models and the agent's settings."""

    wire: WireName
    serve: Callable[[dict[str, Behaviour], bool], WireServer]
    """Builds the server, given the behaviours by served model name and whether it records."""
    variables: tuple[str, str]
    """The base-URL and API-key variables Inspect reads for these models."""
    models: dict[Role, str]
    """Each role's model, as Inspect names it."""
    agent_settings: tuple[str, ...]
    """``occubench run`` options that turn the agent's reasoning on."""

    def behaviours(self) -> dict[str, Behaviour]:
        """Each served model name (the model's last part) and the behaviour answering it."""
        return {
            model.split("/")[-1]: BEHAVIOURS[ROLE_BEHAVIOURS[role]]
            for role, model in self.models.items()
        }

    def server(self, record: bool = False) -> WireServer:
        """A new server for this case (not started), keeping every request if ``record``."""
        return self.serve(self.behaviours(), record)

    def environment(self, server: WireServer) -> dict[str, str]:
        """The variables that point Inspect at ``server``."""
        url, key = self.variables
        return {url: server.base_url, key: CASE_API_KEY}

    def model_options(self) -> list[str]:
        """``--agent-model M --simulator-model M --verifier-model M``."""
        return [
            "--agent-model", self.models[Role.AGENT],
            "--simulator-model", self.models[Role.SIMULATOR],
            "--verifier-model", self.models[Role.VERIFIER],
        ]  # fmt: skip


WIRE_CASES: list[WireCase] = [
    WireCase(
        WireName.ANTHROPIC,
        lambda b, r: AnthropicServer(behaviours=b, record=r, api_keys=[CASE_API_KEY]),
        ("ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"),
        {
            Role.AGENT: "anthropic/claude-sonnet-4-5",
            Role.SIMULATOR: "anthropic/claude-haiku-4-5",
            Role.VERIFIER: "anthropic/claude-opus-4-6",
        },
        ("--reasoning-tokens", "agent=2048"),
    ),
    WireCase(
        WireName.GOOGLE,
        lambda b, r: GoogleServer(behaviours=b, record=r, api_key=CASE_API_KEY),
        ("GOOGLE_BASE_URL", "GOOGLE_API_KEY"),
        {
            Role.AGENT: "google/gemini-3-pro-preview",
            Role.SIMULATOR: "google/gemini-3-flash-preview",
            Role.VERIFIER: "google/gemini-2.5-flash",
        },
        ("--reasoning-effort", "agent=high"),
    ),
    WireCase(
        WireName.OPENAI_RESPONSES,
        lambda b, r: ResponsesServer(behaviours=b, record=r, api_key=CASE_API_KEY),
        ("OPENAI_BASE_URL", "OPENAI_API_KEY"),
        {
            Role.AGENT: "openai/gpt-5.2",
            Role.SIMULATOR: "openai/gpt-5",
            Role.VERIFIER: "openai/o3",
        },
        ("--reasoning-effort", "agent=high"),
    ),
    WireCase(
        WireName.DEEPSEEK_CHAT,
        lambda b, r: ReasoningChatServer(behaviours=b, record=r, api_key=CASE_API_KEY),
        ("DEEPSEEK_BASE_URL", "DEEPSEEK_API_KEY"),
        {
            Role.AGENT: "openai-api/deepseek/deepseek-reasoner",
            Role.SIMULATOR: "openai-api/deepseek/deepseek-chat",
            Role.VERIFIER: "openai-api/deepseek/qwen3-max",
        },
        ("--reasoning-effort", "agent=high"),
    ),
]
"""Every wire's case."""

"""No uncounted "hello, world" request: every role's reasoning_summary is set ("none").

With ``reasoning_summary`` unset, Inspect's OpenAI provider sends a reasoning model on the
Responses API a request of its own before the first generation ("Please say 'hello,
world'", to learn whether summaries are allowed): paid, once per model per process, in no
sample's usage. The run's generate settings set it, so the probe is never sent.
"""

from __future__ import annotations

import asyncio

import pytest
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.model._providers.openai import OpenAIAPI

from occubench.config import EvalOptions
from occubench.roles import Role


class Probed(Exception):
    """The provider asked whether summaries are allowed (the extra request)."""


class Reached(Exception):
    """The provider went on to its own request: no probe before it."""


@pytest.fixture
def provider(monkeypatch):
    async def probe(self):
        raise Probed

    def streaming(self, use_responses):
        raise Reached

    monkeypatch.setattr(OpenAIAPI, "reasoning_summaries", probe)
    monkeypatch.setattr(OpenAIAPI, "_resolve_streaming", streaming)
    model = get_model(
        "openai/o3", api_key="sk-test", base_url="http://127.0.0.1:9/v1", memoize=False
    )
    assert isinstance(model.api, OpenAIAPI)
    return model.api


@pytest.mark.parametrize("role", list(Role))
def test_every_role_sets_no_summary(role):
    assert EvalOptions().generate_config(role).reasoning_summary == "none"


def test_a_role_may_still_ask_for_summaries():
    base = EvalOptions().generate_config(Role.AGENT)
    assert base.merge(GenerateConfig(reasoning_summary="auto")).reasoning_summary == "auto"


def test_the_probe_is_not_sent_with_the_runs_settings(provider):
    run = EvalOptions().generate_config(Role.AGENT)
    with pytest.raises(Reached):
        asyncio.run(provider.generate([], [], "none", run))
    with pytest.raises(Probed):  # Inspect's own default: the probe first
        asyncio.run(provider.generate([], [], "none", GenerateConfig()))


def test_the_preflight_sends_no_probe_either():
    from occubench.scale import Preflight, role_calls

    checks = Preflight(role_calls({Role.AGENT: "openai/o3"}, fast=False))
    assert checks.transport.reasoning_summary == "none"

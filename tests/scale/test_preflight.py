"""The preflight: one transient failure is retried, a lasting one is one line, no secret in it."""

from __future__ import annotations

import pytest

from conftest import HANG_BOUND
from occubench.roles import Role
from occubench.scale import preflight
from occubench.testing import FailureKind, Flakiness, ScriptedOpenAIServer

KEY = "sk-preflight-0123456789abcdef"
AGENT = {Role.AGENT: "openai-api/local/schema-agent"}
# the preflight's limit is a bound on a hang: a busy machine never reaches it, so that the
# outcome is the server's answers (counted), never how fast they came


@pytest.fixture
def endpoint(monkeypatch):
    def serve(flaky: Flakiness) -> ScriptedOpenAIServer:
        server = ScriptedOpenAIServer(flaky=flaky)
        monkeypatch.setenv("LOCAL_API_KEY", KEY)
        return server

    return serve


@pytest.mark.parametrize("kind", [FailureKind.SERVER_ERROR, FailureKind.BAD_JSON])
def test_one_transient_failure_does_not_refuse_the_run(endpoint, monkeypatch, kind):
    with endpoint(Flakiness(rate=1.0, kinds=[kind], failures=1)) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        assert preflight(AGENT, timeout=HANG_BOUND) == []
        stats = server.stats.snapshot()
    # each of the two turns' requests failed once, then was answered
    assert stats["failures"] == {kind.value: 2} and stats["distinct"] == 2


def test_a_lasting_failure_is_one_failure_naming_the_role(endpoint, monkeypatch):
    with endpoint(Flakiness(rate=1.0, kinds=[FailureKind.SERVER_ERROR], failures=100)) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        (failure,) = preflight(AGENT, timeout=HANG_BOUND)
        stats = server.stats.snapshot()
    assert failure.roles == [Role.AGENT] and failure.model == AGENT[Role.AGENT]
    assert stats["failures"]["server_error"] >= 2  # retried, then refused


def test_a_refused_key_quoted_by_the_provider_is_not_repeated(endpoint, monkeypatch):
    with endpoint(Flakiness(rate=1.0, kinds=[FailureKind.AUTH_ERROR], failures=100)) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        (failure,) = preflight(AGENT, timeout=HANG_BOUND)
    assert failure.problem == "the API key was refused"
    assert KEY not in failure.line() and "check LOCAL_API_KEY" in failure.line()


def test_a_replay_of_a_world_tries_neither_the_simulator_nor_the_user():
    """The world answers tool calls and a user's turns: their endpoints need not be up."""
    from occubench.config import RunConfig
    from occubench.scale import preflight_models

    models = {
        Role.AGENT: "a/agent",
        Role.SIMULATOR: "s/sim",
        Role.USER: "u/user",
        Role.VERIFIER: "v/judge",
    }
    replay = RunConfig(world="w", world_mode="replay")
    assert preflight_models(models, replay) == {Role.AGENT: "a/agent", Role.VERIFIER: "v/judge"}
    assert preflight_models(models, RunConfig(world="w")) == models  # recording asks them

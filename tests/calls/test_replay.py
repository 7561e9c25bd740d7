"""No paid work redone: a restarted sample replays its earlier calls (same chain only)."""

from __future__ import annotations

from inspect_ai.log import read_eval_log

from occubench.config import EvalOptions, RunConfig
from occubench.roles import Role
from occubench.scale import BENCHMARK_TASK, run_eval
from occubench.testing import HardFailure, ScriptedOpenAIServer

ROLES = {
    Role.SIMULATOR: "openai-api/local/echo-simulator",
    Role.VERIFIER: "openai-api/local/scripted-judge",
}
FAIL_AT = 5
"""The simulator call that fails for good once (HTTP 400): the sample must restart."""


def run(release_dir, tmp_path, monkeypatch, name, *, replay=True, fail=True, epochs=1):
    """One task over HTTP; returns (requests answered per model, the eval log)."""
    hard = [HardFailure(model="echo-simulator", call=FAIL_AT)] if fail else []
    with ScriptedOpenAIServer(hard_failures=hard) as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")
        outcome = run_eval(
            BENCHMARK_TASK,
            RunConfig(dataset=str(release_dir), task_ids=[11], protocol="occubench").task_args(),
            log_dir=str(tmp_path / name),
            model="openai-api/local/schema-agent",
            roles=ROLES,
            options=EvalOptions(retry_on_error=1, replay_calls=replay),
            epochs=epochs,
        )
        stats = server.stats.snapshot()
    billed = dict(stats["requests"])
    billed["echo-simulator"] -= stats["failures"].get("hard", 0)  # refused: not billed
    return billed, read_eval_log(outcome.logs[0])


def trajectory(log):
    (sample,) = log.samples
    return [(m.role, m.text) for m in sample.messages], sample.scores["occubench_scorer"].value


def test_a_restart_pays_only_the_calls_from_the_failure_on(release_dir, tmp_path, monkeypatch):
    clean, clean_log = run(release_dir, tmp_path, monkeypatch, "clean", fail=False)
    with_replay, replayed_log = run(release_dir, tmp_path, monkeypatch, "replay")
    without, unreplayed_log = run(release_dir, tmp_path, monkeypatch, "no", replay=False)

    for log in (replayed_log, unreplayed_log):
        (sample,) = log.samples
        assert sample.error is None and len(sample.error_retries or []) == 1  # restarted once
        assert "request 5 refused" in sample.error_retries[0].message
        assert trajectory(log) == trajectory(clean_log)  # and ended as a clean run does
    before = FAIL_AT - 1  # simulator calls answered before the failure
    (sample,) = replayed_log.samples
    replayed = sample.store["CallCounts:replayed"]
    assert replayed > before  # the agent's calls and the simulator's before the failure
    assert with_replay == clean  # a restart cost nothing already paid
    assert sum(without.values()) == sum(clean.values()) + replayed  # without: all paid again
    assert without["echo-simulator"] == clean["echo-simulator"] + before
    print(
        f"\nforced restart at simulator call {FAIL_AT}: billed calls clean {sum(clean.values())}"
        f" {clean}, with replay {sum(with_replay.values())}, without replay "
        f"{sum(without.values())} {without}; replayed {replayed}"
    )


def test_nothing_is_replayed_across_epochs(release_dir, tmp_path, monkeypatch):
    one, _ = run(release_dir, tmp_path, monkeypatch, "one", fail=False)
    two, log = run(release_dir, tmp_path, monkeypatch, "two", fail=False, epochs=2)
    assert {k: 2 * v for k, v in one.items()} == two  # the second epoch paid for every call
    assert all(s.store.get("CallCounts:replayed", 0) == 0 for s in log.samples)


def test_a_request_key_reads_each_message_and_tool_once_and_ignores_message_ids(monkeypatch):
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, GenerateConfig
    from inspect_ai.tool import ToolInfo

    from occubench.calls._replay import PartDigests, request_key

    tool = ToolInfo(name="get_order", description="Look an order up.")
    history = [ChatMessageUser(content="Find A1."), ChatMessageAssistant(content="Looking.")]
    parts = PartDigests()
    first = request_key("m", "agent", history, [tool], None, GenerateConfig(), parts)
    dumped = []
    real_dump = ChatMessageUser.model_dump_json

    def counting(self, **kwargs):
        dumped.append(self)
        return real_dump(self, **kwargs)

    monkeypatch.setattr(ChatMessageUser, "model_dump_json", counting)
    longer = [*history, ChatMessageUser(content="And now?")]
    second = request_key("m", "agent", longer, [tool], None, GenerateConfig(), parts)
    assert dumped == [longer[2]]  # only the new message: the history's digests are kept
    assert second != first
    fresh = [ChatMessageUser(content="Find A1."), ChatMessageAssistant(content="Looking.")]
    assert fresh[0].id != history[0].id
    assert request_key("m", "agent", fresh, [tool], None, GenerateConfig()) == first
    changed = [ChatMessageUser(content="Find A2."), history[1]]
    assert request_key("m", "agent", changed, [tool], None, GenerateConfig()) != first

"""Response cache: an identical re-run asks the simulator and the verifier nothing."""

from conftest import run_task
from occubench.testing._openai_server import ScriptedOpenAIServer

ROLES = {
    "simulator": "openai-api/local/echo-simulator",
    "verifier": "openai-api/local/scripted-judge",
}


def test_identical_rerun_is_served_from_the_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    with ScriptedOpenAIServer() as server:
        monkeypatch.setenv("LOCAL_BASE_URL", server.base_url)
        monkeypatch.setenv("LOCAL_API_KEY", "test-key")

        def run(name: str, cache: bool) -> dict[str, int]:
            before = dict(server.stats.requests)
            log = run_task(
                tmp_path / name,
                agent="openai-api/local/schema-agent",
                roles=ROLES,
                task_ids="11",
                cache=cache,
            )
            assert log.status == "success"
            assert [s.scores["occubench_scorer"].value for s in log.samples] == ["C"]
            return {m: n - before.get(m, 0) for m, n in server.stats.requests.items()}

        first = run("first", cache=True)
        second = run("second", cache=True)
        uncached = run("uncached", cache=False)
    assert first["echo-simulator"] > 0 and first["scripted-judge"] == 3  # 3 votes
    assert second.get("echo-simulator", 0) == 0 and second.get("scripted-judge", 0) == 0
    assert second["schema-agent"] == first["schema-agent"]  # the agent under test is never cached
    assert uncached["echo-simulator"] == first["echo-simulator"]
    assert uncached["scripted-judge"] == 3

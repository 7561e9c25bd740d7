from occubench.results import read_runs


def rate(rows, agent, mode):
    chosen = [r for r in rows if r.agent_model == f"occubench/{agent}" and r.env_mode == mode]
    assert len(chosen) == 10 and all(r.error is None for r in chosen)
    return sum(r.passed for r in chosen) / len(chosen)


def test_demo_orders_the_reference_agents(demo_logs):
    rows = read_runs([demo_logs])
    for mode in ("E0", "E1", "E2", "E3"):
        assert rate(rows, "careful", mode) == 1.0
    for agent in ("no-retry", "trusting"):
        assert rate(rows, agent, "E0") == 1.0
    for mode in ("E1", "E3"):
        assert rate(rows, "no-retry", mode) <= 0.5
    for mode in ("E2", "E3"):
        assert rate(rows, "trusting", mode) <= 0.5
    assert rate(rows, "trusting", "E1") >= 0.9  # it does retry explicit errors

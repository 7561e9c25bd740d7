"""``candidate_calls``: canned and planned calls first, then bounded calls built per tool."""

from pathlib import Path

from occubench.dataset import ToolSpec, load_env
from occubench.twins import Call, candidate_calls
from twin_fixtures import ENV, write_counters


def test_canned_calls_come_first_then_each_tools_state_values_within_the_bound(
    tmp_path: Path,
) -> None:
    data, _ = write_counters(tmp_path, counters=5)
    env = load_env(data, ENV)
    calls = candidate_calls(env, [], per_tool=3)
    canned = [Call(c.tool, c.arguments) for c in env.canned_observations or []]
    assert calls[: len(canned)] == canned
    built = calls[len(canned) :]
    # C-1 was canned for both tools; each tool then takes the next state values, 3 at most
    assert [(c.tool, c.arguments["counter_id"]) for c in built] == [
        ("get_counter", "C-2"),
        ("get_counter", "C-3"),
        ("close_counter", "C-2"),
        ("close_counter", "C-3"),
    ]
    assert len(calls) <= len(canned) + 3 * len(env.action_set_definitions)
    assert len(set(map(repr, calls))) == len(calls)  # no call twice


def test_seen_values_join_the_pools_and_values_off_the_schema_are_dropped(
    tmp_path: Path,
) -> None:
    data, _ = write_counters(tmp_path, counters=1)
    env = load_env(data, ENV)
    seen = [{"listing": [{"counter_id": 7}, {"counter_id": "C-9"}]}]  # 7 is not a string
    calls = candidate_calls(env, [], seen=seen)
    ids = [c.arguments["counter_id"] for c in calls if c.tool == "close_counter"]
    assert ids[:2] == ["C-1", "C-9"] and 7 not in ids


def test_every_value_a_schema_lists_is_a_candidate(tmp_path: Path) -> None:
    data, _ = write_counters(tmp_path)
    env = load_env(data, ENV)
    mode = ToolSpec.model_validate(
        {
            "name": "set_mode",
            "description": "Set a counter's mode.",
            "parameters": {
                "type": "object",
                "properties": {
                    "mode": {"type": "string", "enum": ["fast", "slow", "off"]},
                    "locked": {"type": "boolean"},
                },
                "required": ["mode", "locked"],
            },
        }
    )
    env = env.model_copy(update={"action_set_definitions": [mode]})
    calls = candidate_calls(env, [], per_tool=4)
    modes = [(c.arguments["mode"], c.arguments["locked"]) for c in calls if c.tool == "set_mode"]
    assert modes == [
        ("fast", True),
        ("slow", False),
        ("off", False),
    ]

import json

import pytest
from pydantic import ValidationError

from occubench.dataset import load_dataset
from occubench.defaults import DEFAULT_MAX_JSON_DEPTH
from occubench.protocols import MessageStyle
from occubench.worlds import (
    RAW_ARGUMENTS,
    PathStep,
    WorldContext,
    WorldEntry,
    canonical_arguments,
    canonical_json,
    entry_key,
    env_digest,
)
from world_fixtures import CONTEXT, entry, steps


def test_canonical_json_is_one_text_per_value():
    assert canonical_json({"b": [1, 2.5], "a": "é"}) == '{"a":"é","b":[1,2.5]}'
    with pytest.raises(ValueError):
        canonical_json({"a": float("nan")})


def test_arguments_that_parse_to_one_object_are_one_action():
    forms = ['{"b": 1, "a": {"y": [1, 2], "x": "é"}}', '{"a":{"x":"\\u00e9","y":[1,2]},"b":1}']
    parsed = {"a": {"x": "é", "y": [1, 2]}, "b": 1}
    assert [canonical_arguments(f) for f in forms] == [parsed, parsed]
    assert canonical_arguments(parsed) == parsed
    assert canonical_arguments(None) == canonical_arguments("  ") == {}


@pytest.mark.parametrize(
    "text",
    [
        '{"id": 1',  # cut off
        "[1, 2]",  # not an object
        '"id"',
        '{"x": NaN}',  # not JSON
        '{"x": 1e999}',  # an infinity
        "[" * 5000 + "]" * 5000,  # deeper than the parser goes
        "{" + '"a":' * 1 + "1" * 5000 + "}",  # an integer Python will not convert
    ],
)
def test_text_that_is_not_a_json_object_is_kept_as_it_is(text):
    assert canonical_arguments(text) == {RAW_ARGUMENTS: text}


def test_an_object_deeper_than_the_rule_is_kept_as_text():
    deep = '{"a":' * (DEFAULT_MAX_JSON_DEPTH + 1) + "1" + "}" * (DEFAULT_MAX_JSON_DEPTH + 1)
    assert canonical_arguments(deep) == {RAW_ARGUMENTS: deep}
    fits = '{"a":' * DEFAULT_MAX_JSON_DEPTH + "1" + "}" * DEFAULT_MAX_JSON_DEPTH
    assert RAW_ARGUMENTS not in canonical_arguments(fits)


def test_an_object_that_looks_like_raw_text_does_not_share_its_key():
    # the agent may send {"__raw__": "x"} itself: it must not meet the unparseable text x
    sent = canonical_arguments('{"__raw__": "x"}')
    assert sent != canonical_arguments("x") == {RAW_ARGUMENTS: "x"}
    assert sent == {RAW_ARGUMENTS: '{"__raw__": "x"}'}
    assert canonical_arguments({RAW_ARGUMENTS: "x"}) == {RAW_ARGUMENTS: '{"__raw__":"x"}'}


def test_lone_surrogates_are_escaped_so_that_steps_can_be_written():
    step = PathStep.of("find", '{"name": "J\\ud83d"}')
    assert step.arguments == {"name": "J\\ud83d"}
    json.dumps(step.model_dump()).encode("utf-8")


def key(context: WorldContext, *calls) -> str:
    *path, call = steps(*calls)
    return entry_key(context.digest(), path, call)


def test_the_key_is_the_path_and_the_call_in_order():
    a, b = ("get", {"id": 1}), ("put", {"id": 1, "v": 2})
    assert key(CONTEXT, a, b) == key(CONTEXT, ("get", '{"id":1}'), ("put", '{"v":2, "id":1}'))
    assert len({key(CONTEXT, a, b), key(CONTEXT, b, a), key(CONTEXT, b), key(CONTEXT, a)}) == 4


def test_a_failed_step_on_the_path_changes_the_key_and_a_failed_call_has_none():
    clean = PathStep.of("get", {"id": 1})
    failed = PathStep.of("get", {"id": 1}, failed={"error": "timeout"})
    call = PathStep.of("list", {})
    assert entry_key("0" * 64, [clean], call) != entry_key("0" * 64, [failed], call)
    with pytest.raises(ValueError, match="cannot have failed"):
        entry_key("0" * 64, [], failed)


@pytest.mark.parametrize(
    "change",
    [
        {"env_digest": "1" * 64},
        {"system_prompt_digest": "1" * 64},
        {"layout": MessageStyle.PAPER},
        {"model": "other/model"},
        {"generate": {"max_tokens": 512, "seed": 8}},
        {"state_mode": "explicit"},
        {"sim_checks": True},
        {"check_model": "other/checker"},
        {"pass_raw": True},
        {"retries": 3},
        {"variant": 1},
    ],
)
def test_everything_the_simulator_would_see_changes_the_key(change):
    other = CONTEXT.model_copy(update=change)
    assert other.digest() != CONTEXT.digest()
    assert key(other, ("get", {"id": 1})) != key(CONTEXT, ("get", {"id": 1}))


def test_the_context_is_checked():
    with pytest.raises(ValidationError):
        WorldContext.model_validate({**CONTEXT.model_dump(), "env_digest": "../x"})
    with pytest.raises(ValidationError):
        WorldContext.model_validate({**CONTEXT.model_dump(), "format": 2})


def test_an_env_digest_follows_the_config(release_dir):
    data = load_dataset(release_dir)
    first, second = list(data.envs.values())[:2]
    assert env_digest(first) == env_digest(first.model_copy())
    assert env_digest(first) != env_digest(second)
    changed = first.model_copy(update={"world_model_system_prompt": "other"})
    assert env_digest(changed) != env_digest(first)


def test_an_entry_is_sealed_by_its_digest():
    made = entry(("get", {"id": 1}))
    assert made.sealed().digest == made.digest and len(made.digest) == 64
    changed = made.model_copy(update={"text": "other"})
    assert changed.sealed().digest != made.digest
    line = json.loads(made.line())
    assert line["digest"] == made.digest and line["key"] == made.key


def test_answers_are_compared_apart_from_provenance():
    one = entry(("get", {"id": 1}), answer="a", author="x", minute=1)
    same = entry(("get", {"id": 1}), answer="a", author="y", minute=2)
    other = entry(("get", {"id": 1}), answer="b")
    assert one.digest != same.digest and one.answer_digest() == same.answer_digest()
    assert one.answer_digest() != other.answer_digest()


def test_a_recorded_entry_is_cleaned_so_it_can_be_written():
    call = PathStep.of("get", {})
    made = WorldEntry.record("0" * 64, [], call, text="J\ud83d", author="m")
    assert made.text == "J\\ud83d"
    made.line()

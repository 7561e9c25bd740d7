import copy
import datetime as dt
import json
import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from occubench.faults import (
    EXPLICIT_KINDS,
    IMPLICIT_KINDS,
    Degradation,
    FaultKind,
    degrade,
    explicit_error,
)

KEY_NAMES = ["id", "order_id", "userId", "ITEM-IDS", "name", "sku", "customer_name", "flightNumber"]
EXTRA_KEY = "ref"  # passed through key_fields
PLAIN_NAMES = ["status", "qty", "price", "notes", "paid", "valid", "updated_at", "tags", "items"]

dates = st.dates(min_value=dt.date(1900, 1, 1)).flatmap(
    lambda d: st.sampled_from([d.isoformat(), f"{d.isoformat()}T08:30:00Z"])
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**6), max_value=10**6)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | dates
)
names = st.sampled_from([*KEY_NAMES, EXTRA_KEY, *PLAIN_NAMES]) | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(names, inner, max_size=6),
    max_leaves=40,
)
records = st.lists(
    st.fixed_dictionaries(
        {"id": st.integers(0, 99)},
        optional={n: scalars for n in ["status", "qty", "price", "notes", "updated_at"]},
    ),
    max_size=8,
)
observations = json_values | st.fixed_dictionaries({"results": records, "total": st.integers()})
implicit = st.sampled_from(IMPLICIT_KINDS)
seeds = st.integers(min_value=0, max_value=2**32)

ORDERS = {
    "order_id": "O-17",
    "status": "open",
    "updated_at": "2025-06-10T09:00:00Z",
    "lines": [
        {"line_id": i, "sku": f"S{i}", "qty": 3 + i, "price": 19.99, "note": "fragile"}
        for i in range(5)
    ],
}


def run(kind, observation, seed=0, **kwargs) -> Degradation:
    return degrade(kind, observation, random.Random(seed), **kwargs)


def fields(value, path=()):
    """Every object member at any depth, as {path: value}."""
    found = {}
    if isinstance(value, dict):
        for key, child in value.items():
            found[(*path, key)] = child
            found.update(fields(child, (*path, key)))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found.update(fields(child, (*path, index)))
    return found


def changed_inside(old, new):
    """Whether a container differs only through its members (same type and length)."""
    return (
        isinstance(old, dict)
        and isinstance(new, dict)
        or (isinstance(old, list) and isinstance(new, list) and len(old) == len(new))
    )


def lists(value):
    """Every list at any depth, the value itself included."""
    found = [value] if isinstance(value, list) else []
    children = value.values() if isinstance(value, dict) else value if found else []
    for child in children:
        found += lists(child)
    return found


# --- properties of every implicit kind ---------------------------------------


@given(implicit, observations, seeds, st.none() | json_values)
def test_degradation_is_valid_json_of_the_same_type_and_leaves_input_alone(
    kind, observation, seed, previous
):
    before = copy.deepcopy(observation)
    result = run(kind, observation, seed, previous=previous, key_fields=[EXTRA_KEY])
    assert observation == before
    assert type(result.observation) is type(observation)
    assert json.loads(json.dumps(result.observation)) == result.observation
    assert result.applied == bool(result.changes)
    if result.applied:
        assert result.observation != observation
    else:
        assert result.observation == observation
    if isinstance(observation, dict | list):
        assert result.observation is not observation


@given(implicit, observations, seeds)
def test_degradation_is_deterministic_given_the_rng(kind, observation, seed):
    assert run(kind, observation, seed) == run(kind, observation, seed)


@given(st.sampled_from(IMPLICIT_KINDS[1:]), observations, seeds)
def test_key_fields_are_never_touched(kind, observation, seed):
    result = run(kind, observation, seed, key_fields=[EXTRA_KEY])
    after = fields(result.observation)
    for path, value in fields(observation).items():
        if path[-1] in KEY_NAMES or path[-1] == EXTRA_KEY:
            assert path in after
            if not isinstance(value, dict | list):  # a container may change inside
                assert after[path] == value


@given(st.sampled_from(EXPLICIT_KINDS), observations)
def test_degrade_rejects_explicit_kinds(kind, observation):
    with pytest.raises(ValueError):
        run(kind, observation)


# --- truncated_list ------------------------------------------------------------


@given(observations, seeds)
def test_truncation_keeps_the_first_one_or_two_items_of_the_longest_list(observation, seed):
    result = run(FaultKind.TRUNCATED_LIST, observation, seed)
    longest = max((len(v) for v in lists(observation)), default=0)
    assert result.applied == (longest >= 2)
    if result.applied:
        (change,) = result.changes
        match = re.fullmatch(r"truncated (\$.*) from (\d+) to (\d+) items?", change)
        assert match and int(match[2]) == longest and int(match[3]) in (1, 2)
        assert int(match[3]) < longest
        assert max(len(v) for v in lists(result.observation)) <= longest


def test_truncation_of_a_nested_list():
    result = run(FaultKind.TRUNCATED_LIST, ORDERS, seed=3)
    kept = result.observation["lines"]
    assert 1 <= len(kept) <= 2 and kept == ORDERS["lines"][: len(kept)]
    assert result.changes == [
        f"truncated $.lines from 5 to {len(kept)} item" + "s" * (len(kept) > 1)
    ]
    assert {k: v for k, v in result.observation.items() if k != "lines"} == {
        k: v for k, v in ORDERS.items() if k != "lines"
    }


def test_truncation_of_a_top_level_list():
    result = run(FaultKind.TRUNCATED_LIST, [1, 2, 3, 4], seed=1)
    assert result.observation in ([1], [1, 2])
    assert result.changes[0].startswith("truncated $ from 4 to ")


@pytest.mark.parametrize("observation", [{"items": [1]}, {"a": {"b": []}}, [7], "text", 3, None])
def test_truncation_not_applicable(observation):
    result = run(FaultKind.TRUNCATED_LIST, observation)
    assert not result.applied and result.changes == [] and result.observation == observation


# --- missing_fields ------------------------------------------------------------


@given(observations, seeds)
def test_missing_fields_only_removes_members_that_existed(observation, seed):
    result = run(FaultKind.MISSING_FIELDS, observation, seed)
    before, after = fields(observation), fields(result.observation)
    assert set(after) <= set(before)
    if result.applied:
        assert len(after) < len(before)
        assert 1 <= len(result.changes) <= 2
        assert all(c.startswith("removed $") for c in result.changes)
    pairs = [(observation, result.observation)] + [(before[p], after[p]) for p in after]
    for old, new in pairs:
        if isinstance(old, dict) and old:
            assert new, "a record was emptied"


def test_missing_fields_from_each_item_of_the_main_list():
    for seed in range(20):
        result = run(FaultKind.MISSING_FIELDS, ORDERS, seed)
        removed = set(ORDERS["lines"][0]) - set(result.observation["lines"][0])
        assert 1 <= len(removed) <= 2
        assert removed <= {"qty", "price", "note"}
        assert all(
            set(line) == set(result.observation["lines"][0]) for line in result.observation["lines"]
        )
        assert sorted(result.changes) == sorted(
            f"removed $.lines[*].{n} in 5 items" for n in removed
        )


def test_missing_fields_respects_extra_key_fields_and_never_empties_a_record():
    observation = {"ref": "A1", "status": "ok", "amount": 5}
    for seed in range(20):
        result = run(FaultKind.MISSING_FIELDS, observation, seed, key_fields=["ref", "amount"])
        assert result.observation == {"ref": "A1", "amount": 5}
        assert result.changes == ["removed $.status"]
    assert not run(FaultKind.MISSING_FIELDS, {"status": "ok"}).applied


@pytest.mark.parametrize(
    "key",
    [
        "ID",
        "Id",
        "user_id",
        "ORDER-ID",
        "item.ids",
        "uuid",
        "userId",
        "orderID",
        "tagIds",
        "Name",
        "SKU",
        "Title",
        "email",
        "first_name",
        "accountNumber",
        "airport_code",
        "zipCode",
    ],
)
def test_key_name_rule(key):
    observation = {key: "K", "status": "ok", "qty": 2}
    for kind in IMPLICIT_KINDS[1:]:
        for seed in range(10):
            assert run(kind, observation, seed).observation[key] == "K"
    assert "status" not in run(FaultKind.MISSING_FIELDS, {key: "K", "status": "ok"}).observation


def test_nested_entities_are_not_removed_or_nulled():
    observation = {
        "status": "ok",
        "note": "n",
        "customer": {"customer_id": "C1"},
        "items": [{"id": 1}, {"id": 2}],
    }
    for kind in (FaultKind.MISSING_FIELDS, FaultKind.NULL_FIELDS):
        for seed in range(20):
            result = run(kind, observation, seed)
            assert result.applied
            assert result.observation["customer"] == observation["customer"]
            assert result.observation["items"] == observation["items"]


def test_lookalike_names_are_not_keys():
    observation = {"id": 1, "paid": True, "valid": False}
    seen = set()
    for seed in range(20):
        result = run(FaultKind.MISSING_FIELDS, observation, seed)
        assert "id" in result.observation
        seen |= set(observation) - set(result.observation)
    assert seen == {"paid", "valid"}


@pytest.mark.parametrize(
    "observation",
    [{"id": 1, "order_id": "x", "userId": 3, "name": "n"}, [1, 2], "text", {}, {"error": {}}],
)
def test_missing_fields_not_applicable(observation):
    result = run(FaultKind.MISSING_FIELDS, observation)
    assert not result.applied and result.observation == observation


# --- null_fields ---------------------------------------------------------------


@given(observations, seeds)
def test_null_fields_only_blanks_values_that_had_content(observation, seed):
    result = run(FaultKind.NULL_FIELDS, observation, seed)
    before, after = fields(observation), fields(result.observation)
    assert set(after) <= set(before)
    changed = {
        p for p in after if after[p] != before[p] and not changed_inside(before[p], after[p])
    }
    assert bool(changed) == result.applied
    for path in changed:
        assert after[path] in (None, "", [])
        assert before[path] not in (None, "", [])
        assert not isinstance(before[path], dict)
    if result.applied:
        assert all(re.fullmatch(r"set \$.* to .+", c) for c in result.changes)


def test_null_fields_on_a_single_object():
    observation = {"order_id": "O-1", "status": "open", "tags": ["a"], "meta": {"x": None}}
    for seed in range(20):
        result = run(FaultKind.NULL_FIELDS, observation, seed)
        changed = {k for k in observation if result.observation[k] != observation[k]}
        assert 1 <= len(changed) <= 2 and changed <= {"status", "tags"}
        assert result.observation["status"] in ("open", "", None)
        assert result.observation["tags"] in (["a"], [], None)


def test_null_fields_not_applicable():
    observation = {"id": 4, "notes": "", "tags": [], "extra": None, "meta": {}}
    assert not run(FaultKind.NULL_FIELDS, observation).applied


# --- stale_values --------------------------------------------------------------


def test_stale_values_prefers_a_different_previous_observation():
    previous = {"order_id": "O-17", "status": "pending"}
    result = run(FaultKind.STALE_VALUES, ORDERS, previous=previous)
    assert result.observation == previous and result.observation is not previous
    assert result.changes == ["replaced with the previous observation of this tool"]


@pytest.mark.parametrize("previous", [None, ORDERS, ["not", "an", "object"]])
def test_stale_values_perturbs_when_previous_is_unusable(previous):
    result = run(FaultKind.STALE_VALUES, ORDERS, seed=5, previous=copy.deepcopy(previous))
    assert result.applied
    assert result.changes[0].startswith("changed $")
    assert result.observation["order_id"] == "O-17"


@given(observations, seeds)
def test_stale_values_only_ages_numbers_and_dates(observation, seed):
    result = run(FaultKind.STALE_VALUES, observation, seed)
    before, after = fields(observation), fields(result.observation)
    assert set(after) == set(before)
    for path, old in before.items():
        new = after[path]
        if new == old or changed_inside(old, new):
            continue
        assert type(new) is type(old)
        if isinstance(old, int | float):
            assert abs(new) < abs(old)
            if isinstance(old, int) and abs(old) > 20:
                assert 0.79 * abs(old) - 1 <= abs(new) <= 0.96 * abs(old)
        else:
            assert isinstance(old, str)
            old_day = dt.date.fromisoformat(old[:10])
            new_day = dt.date.fromisoformat(new[:10])
            assert 1 <= (old_day - new_day).days <= 30
            assert new[10:] == old[10:]


def test_stale_values_on_a_single_object():
    observation = {"account_id": "A", "balance": 1200, "rate": 0.035, "as_of": "2025-06-16"}
    result = run(FaultKind.STALE_VALUES, observation, seed=2)
    for change in result.changes:
        assert re.fullmatch(r"changed \$\.\w+ from \S+ to \S+", change)
    assert result.observation["account_id"] == "A"
    assert isinstance(result.observation["balance"], int)


def test_stale_prices_keep_their_precision():
    for seed in range(20):
        fee = run(FaultKind.STALE_VALUES, {"fee": 0.01}, seed).observation["fee"]
        assert 0 < fee < 0.01
    for seed in range(20):
        price = run(FaultKind.STALE_VALUES, {"price": 19.99}, seed).observation["price"]
        assert 0.8 * 19.99 - 0.01 <= price <= 0.95 * 19.99 + 0.01
        assert price == round(price, 2)


@pytest.mark.parametrize(
    "observation", [{"id": 5, "status": "ok", "zero": 0, "flag": True}, [3, 4], "2025-01-01"]
)
def test_stale_values_not_applicable(observation):
    assert not run(FaultKind.STALE_VALUES, observation).applied


# --- explicit errors -----------------------------------------------------------


@given(st.sampled_from(EXPLICIT_KINDS), st.text(min_size=1, max_size=20), seeds)
def test_explicit_errors_are_json_and_name_the_tool(kind, tool, seed):
    error = explicit_error(kind, tool, random.Random(seed))
    assert json.loads(json.dumps(error)) == error
    assert set(error) == {"error"}
    assert tool in error["error"]["message"]
    assert error == explicit_error(kind, tool, random.Random(seed))


def test_each_explicit_kind_looks_like_its_failure():
    def err(kind):
        return explicit_error(kind, "search_flights", random.Random(0), hints=True)["error"]

    assert err(FaultKind.HTTP_500)["status"] == 500
    timeout = err(FaultKind.TIMEOUT)
    assert timeout["status"] == 504 and timeout["retryable"] is True
    assert "Retry" in timeout["message"]
    assert err(FaultKind.CONNECTION_REFUSED)["code"] == "ECONNREFUSED"
    unavailable = err(FaultKind.SERVICE_UNAVAILABLE)
    assert unavailable["status"] == 503 and unavailable["retry_after_seconds"] > 0


@pytest.mark.parametrize("kind", EXPLICIT_KINDS)
def test_error_bodies_advise_nothing_without_hints(kind):
    error = explicit_error(kind, "search_flights", random.Random(0))["error"]
    text = json.dumps(error).lower()
    assert "retry" not in text and "try again" not in text, error
    with_hints = explicit_error(kind, "search_flights", random.Random(0), hints=True)["error"]
    assert error["code"] == with_hints["code"]  # the same failure, only the advice differs


@pytest.mark.parametrize("kind", IMPLICIT_KINDS)
def test_explicit_error_rejects_implicit_kinds(kind):
    with pytest.raises(ValueError):
        explicit_error(kind, "tool", random.Random(0))

"""Every record a log holds reads back as written (``occubench.records``).

Inspect writes a sample leaving out the None fields of every pydantic model in it. The
records a log holds are the fields of the package's store models (``StoreModel``
subclasses: the episode, call counts, served sessions, ...) and the task and environment
in each sample's metadata (dumped without their None fields). Each record type is found
from those roots, so a store or a record added later is checked too.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import types
import typing
from enum import Enum

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from inspect_ai.util import StoreModel
from pydantic import BaseModel, ValidationError
from pydantic_core import PydanticUndefined, to_json, to_jsonable_python

import occubench
from occubench.dataset import EnvConfig, TaskRecord
from occubench.records import NullsKept


def _store_models() -> list[type[StoreModel]]:
    """The package's store models (every module imported, then ``StoreModel``'s subclasses)."""
    for info in pkgutil.walk_packages(occubench.__path__, "occubench."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found: list[type[StoreModel]] = []
    todo = list(StoreModel.__subclasses__())
    while todo:
        cls = todo.pop()
        todo += cls.__subclasses__()
        if cls.__module__.startswith("occubench."):
            found.append(cls)
    return sorted(found, key=lambda c: c.__qualname__)


STORES = _store_models()
ROOTS: list[type[BaseModel]] = [*STORES, TaskRecord, EnvConfig]
"""What a log holds as models: the stores' fields, a sample's task and environment."""
STORE_FIELDS = {"store", "instance"}
"""A store model's own binding, never written."""


def _models_in(annotation: object, found: dict[str, type[BaseModel]]) -> None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        if annotation.__qualname__ not in found:
            found[annotation.__qualname__] = annotation
            for name, field in annotation.model_fields.items():
                if name not in STORE_FIELDS or not issubclass(annotation, StoreModel):
                    _models_in(field.annotation, found)
        return
    for arg in typing.get_args(annotation):
        _models_in(arg, found)


RECORDS: dict[str, type[BaseModel]] = {}
for _root in ROOTS:
    _models_in(_root, RECORDS)


def _admits_none(annotation: object) -> bool:
    if annotation in (None, type(None), typing.Any):
        return True
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        return any(_admits_none(a) for a in typing.get_args(annotation))
    if origin is typing.Annotated:
        return _admits_none(typing.get_args(annotation)[0])
    return False


def _fields(model: type[BaseModel]) -> dict[str, typing.Any]:
    return {
        name: field
        for name, field in model.model_fields.items()
        if not (issubclass(model, StoreModel) and name in STORE_FIELDS)
    }


def test_the_roots_are_found():
    names = {m.__qualname__ for m in STORES}
    assert {"Episode", "CallCounts", "ServedSession", "SubmittedGrade", "ProbeRun"} <= names
    assert {"SimStep", "SimCheck", "CheckFailure", "InjectedFault", "StateEqualsCheck"} <= set(
        RECORDS
    )


@pytest.mark.parametrize("name", sorted(RECORDS))
def test_a_field_that_can_be_none_reads_back_as_none_when_left_out(name):
    """The rule itself: a None field defaults to None, or its record writes it as null."""
    model = RECORDS[name]
    if issubclass(model, NullsKept):
        return
    wrong = [
        field_name
        for field_name, field in _fields(model).items()
        if _admits_none(field.annotation)
        and (field.is_required() or field.default_factory is not None or field.default is not None)
    ]
    assert not wrong, f"{name}: {wrong} can be None but do not read back as None when left out"


# ---------------------------------------------------------------------------------------
# the property: any record, with any of its optional fields None, written as Inspect
# writes it, reads back equal


def _leaf(annotation: object) -> st.SearchStrategy[typing.Any] | None:
    if annotation is str:
        return st.text(max_size=4)
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(min_value=0, max_value=5)
    if annotation is float:
        return st.floats(min_value=0, max_value=10, allow_nan=False)
    if annotation is typing.Any:
        scalars = st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3)
        return scalars | st.dictionaries(st.text(max_size=3), scalars, max_size=2)
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        return st.sampled_from(list(annotation)).map(lambda e: e.value)
    return None


def _strategy(annotation: object, depth: int = 0) -> st.SearchStrategy[typing.Any]:
    leaf = _leaf(annotation)
    if leaf is not None:
        return leaf
    if annotation is type(None) or annotation is None:
        return st.none()
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _record(annotation, depth + 1)
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _strategy(args[0], depth)
    if origin is typing.Literal:
        return st.sampled_from(args)
    if origin in (typing.Union, types.UnionType):
        return st.one_of(*(_strategy(a, depth) for a in args))
    if origin is list:
        return st.lists(_strategy(args[0], depth), max_size=2 if depth < 3 else 0)
    if origin is tuple and args and args[-1] is Ellipsis:
        return st.lists(_strategy(args[0], depth), max_size=2).map(tuple)
    if origin is dict:
        return st.dictionaries(st.text(max_size=3), _strategy(args[1], depth), max_size=2)
    raise AssertionError(f"no strategy for {annotation!r}: teach this test its type")


def _record(model: type[BaseModel], depth: int = 0) -> st.SearchStrategy[dict[str, typing.Any]]:
    """A record's fields as JSON-like values; optional fields absent or None half the time."""
    required: dict[str, st.SearchStrategy[typing.Any]] = {}
    optional: dict[str, st.SearchStrategy[typing.Any]] = {}
    for name, field in _fields(model).items():
        values = _strategy(field.annotation, depth)
        if field.is_required():
            required[name] = values
        else:
            optional[name] = (st.none() if _admits_none(field.annotation) else values) | values
    return st.fixed_dictionaries(required, optional=optional)


def _built(model: type[BaseModel], data: dict[str, typing.Any]) -> BaseModel:
    try:
        return model.model_validate(data)
    except ValidationError:
        assume(False)  # a value the record's own rules refuse (a bound, a pattern)
        raise


def _as_inspect_writes(record: BaseModel) -> typing.Any:
    """The record's JSON as Inspect writes a sample: None fields of models left out."""
    return json.loads(to_json(to_jsonable_python(record, exclude_none=True), exclude_none=True))


@pytest.mark.parametrize(
    "name", sorted(n for n, m in RECORDS.items() if not issubclass(m, StoreModel))
)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_record_reads_back_as_inspect_wrote_it(name, data):
    model = RECORDS[name]
    record = _built(model, data.draw(_record(model)))
    read = model.model_validate(_as_inspect_writes(record))
    assert read.model_dump(mode="json") == record.model_dump(mode="json")


@pytest.mark.parametrize("store", STORES, ids=lambda s: s.__qualname__)
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_any_store_reads_back_as_inspect_wrote_it(store, data):
    """A whole store model: its fields written into a store, the store logged, read back."""
    from inspect_ai.util import Store

    values = data.draw(_record(store))
    bound = _built(store, {})
    for name, value in values.items():
        try:
            setattr(bound, name, value)
        except ValidationError:
            assume(False)
    logged = _as_inspect_writes(bound.store._data)
    read = store(store=Store(logged))
    for name in _fields(store):
        got, want = getattr(read, name), getattr(bound, name)
        assert to_jsonable_python(got) == to_jsonable_python(want), name


def test_unset_defaults_are_not_undefined():
    """Guard the rule's reading of pydantic: a field with no default is required."""
    for model in RECORDS.values():
        for field in _fields(model).values():
            assert field.is_required() == (
                field.default is PydanticUndefined and field.default_factory is None
            )

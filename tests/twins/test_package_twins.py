"""Conformance of every package twin to its config (parametrized over ``package_twins()``).

Each twin the package ships is held to its config, so a twin added later is covered
without a line here: its config is read from the reference suite, or from the public
sample (``public_sample``: skipped when absent). On the twin's candidate calls
(``twins.candidate_calls``: the config's canned calls, the tasks' planned calls, and
calls whose arguments come from the state, those calls and the tool's ``example_output``,
else from its schema):

1. every success observation fits its tool's ``example_output`` (``shape_problems``);
   the canned calls get exactly the canned observations;
2. a read whose id argument names nothing in the config is the config's error: outcome
   ERROR, the shape of an error example of its prompt, with the same ``code``/``status``;
3. an unknown tool and arguments that break the schema are errors and change no state;
4. on the reference suite, each task's reference plan solves it: every step succeeds, the
   rendered answer states every answer fact, and every check of the task holds (the
   grading room's deterministic checks, on the twin's final state). The sample's tasks
   have no plans: each sample twin's author solves them in ``tests/twins/envs/``.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from occubench.dataset import (
    AnswerContainsCheck,
    Dataset,
    EnvConfig,
    TaskRecord,
    ToolSpec,
    example_arguments,
    load_dataset,
    load_env,
    reference_suite_dir,
)
from occubench.grading import ToolCall, run_check, run_checks
from occubench.scripted._agents import Plan, Step, render_answer
from occubench.simchecks import is_id_key, is_read_tool
from occubench.twins import (
    Outcome,
    Twin,
    TwinStep,
    candidate_calls,
    error_shapes,
    leaves,
    package_twins,
    schema_problem,
    shape_problems,
)

Call = tuple[str, dict[str, Any]]

TWINS = sorted(package_twins())
UNKNOWN_ID = "ZZ-NOWHERE-0000"
"""An id no config holds (checked against each state)."""
UNKNOWN_NUMBER = 987_654_321
"""A number that names nothing in any config (checked against each state)."""
UNKNOWN_TOOL = "zz_no_such_tool"
CODE_KEYS = ("code", "status")
"""Keys whose value in an error example is the error's kind, which an error must repeat."""


@cache
def _dataset(root: Path) -> Dataset:
    return load_dataset(root)


def _holds(root: Path, name: str) -> bool:
    return (root / "world_model_configs" / f"{name}.json").is_file()


def _is_reference(env: EnvConfig) -> bool:
    return _holds(reference_suite_dir(), env.environment_name)


def _config(name: str, request: pytest.FixtureRequest) -> tuple[EnvConfig, list[TaskRecord]]:
    """The twin's config and tasks: from the reference suite, else the public sample."""
    root = reference_suite_dir()
    if not _holds(root, name):
        # the public sample's twins: skipped, saying so, when the sample is absent
        root = request.getfixturevalue("public_sample")
    assert _holds(root, name), f"package twin of {name!r}: no config in the suite or the sample"
    return load_env(root, name), [t for t in _dataset(root).tasks if t.env_name == name]


def _twin(env: EnvConfig) -> Twin:
    return package_twins()[env.environment_name](env)


Case = tuple[EnvConfig, list[TaskRecord], Twin]


@pytest.fixture(params=TWINS)
def case(request: pytest.FixtureRequest) -> Case:
    """Each package twin, fresh, with its config and tasks (``_config``)."""
    env, tasks = _config(request.param, request)
    return env, tasks, _twin(env)


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def _fresh_steps(twin: Twin, calls: list[Call]) -> list[TwinStep]:
    """Each call answered from the initial state."""
    steps = []
    for tool, arguments in calls:
        twin.reset()
        steps.append(twin.call(tool, arguments))
    return steps


def _fits_error(observation: dict[str, Any], shapes: list[dict[str, Any]], kind: bool) -> bool:
    """Whether an error fits one of the config's error examples (with its kind: ``kind``)."""
    for shape in shapes:
        if shape_problems(observation, shape):
            continue
        got = dict(leaves(observation))
        wanted = [(p, v) for p, v in leaves(shape) if p.rsplit("/", 1)[-1] in CODE_KEYS]
        if not kind or all(got.get(p) == v for p, v in wanted):
            return True
    return not shapes


def _reference_tasks() -> list[TaskRecord]:
    return [t for t in _dataset(reference_suite_dir()).tasks if t.reference_plan]


def test_success_observations_fit_the_tools_example_output(case: Case) -> None:
    env, tasks, twin = case
    steps = _fresh_steps(twin, candidate_calls(env, tasks))
    for task in tasks:
        if task.reference_plan:
            twin.reset()
            steps += twin.run((s.tool, s.arguments) for s in task.reference_plan.steps)
    succeeded = {s.tool for s in steps if s.outcome is Outcome.SUCCESS}
    problems = [
        f"{s.tool}({s.arguments}): {problem}"
        for s in steps
        if s.outcome is Outcome.SUCCESS and twin.specs[s.tool].example_output is not None
        for problem in shape_problems(s.observation, twin.specs[s.tool].example_output, s.free)
    ]
    assert problems == []
    # the shape check saw every tool answer (the reference suite) or some tool (a sample env)
    assert succeeded == set(twin.specs) if _is_reference(env) else succeeded


def test_canned_calls_get_the_canned_observation(case: Case) -> None:
    env, _, twin = case
    canned = env.canned_observations or []
    for known in canned:
        twin.reset()
        assert twin.call(known.tool, known.arguments).observation == known.observation
    assert canned or not _is_reference(env)


def _id_arguments(env: EnvConfig, spec: ToolSpec, arguments: dict[str, Any]) -> list[str]:
    """The arguments that name a record: free strings or integers (not flags) whose name is
    an id's (``simchecks.is_id_key``) or by which the config's canned calls name a record."""
    properties = spec.parameters.get("properties") or {}
    canned = {n for c in env.canned_observations or [] if c.tool == spec.name for n in c.arguments}
    return [
        name
        for name, value in arguments.items()
        if isinstance(value, str | int)
        and not isinstance(value, bool)
        and not {"enum", "const", "pattern", "format"} & set(properties.get(name) or {})
        and (is_id_key(name) or name in canned)
    ]


def test_an_unknown_id_gets_the_configs_error(case: Case) -> None:
    env, tasks, twin = case
    assert UNKNOWN_ID not in _key(env.task_initial_state)
    assert str(UNKNOWN_NUMBER) not in _key(env.task_initial_state)
    shapes, checked = error_shapes(env), set()
    for tool, arguments in candidate_calls(env, tasks):
        spec = twin.specs[tool]
        twin.reset()
        if not is_read_tool(tool) or twin.call(tool, arguments).outcome is Outcome.ERROR:
            continue
        for argument in _id_arguments(env, spec, arguments):
            unknown = UNKNOWN_ID if isinstance(arguments[argument], str) else UNKNOWN_NUMBER
            if schema_problem(spec, {**arguments, argument: unknown}) is not None:
                continue  # the schema bounds it: a call with it is the schema's error
            twin.reset()
            step = twin.call(tool, {**arguments, argument: unknown})
            assert step.outcome is Outcome.ERROR, (tool, argument, step.observation)
            assert _fits_error(step.observation, shapes, kind=True), (step.observation, shapes)
            assert step.changes == []
            checked.add(tool)
    # on the reference suite, every tool was asked for an unknown id
    assert checked == set(twin.specs) or not _is_reference(env)


def _wrong_value(schema: dict[str, Any]) -> Any:
    """A value of another JSON type than the property's."""
    return "not-a-list" if schema.get("type") == "array" else [["not", "this", "type"]]


def _typed(spec: ToolSpec) -> bool:
    properties = (spec.parameters.get("properties") or {}).values()
    return any(isinstance(p, dict) and "type" in p for p in properties)


def _broken_calls(spec: ToolSpec) -> list[dict[str, Any]]:
    """Arguments that break the tool's schema: required ones left out, each one mistyped."""
    valid = example_arguments(spec.parameters)
    broken = [{}] if spec.parameters.get("required") else []
    for name, schema in (spec.parameters.get("properties") or {}).items():
        if isinstance(schema, dict) and "type" in schema:
            broken.append({**valid, name: _wrong_value(schema)})
    return [arguments for arguments in broken if schema_problem(spec, arguments) is not None]


def test_unknown_tools_and_broken_arguments_are_errors_that_change_nothing(case: Case) -> None:
    env, _, twin = case
    calls: list[Call] = [(UNKNOWN_TOOL, {})]
    calls += [(s.name, args) for s in env.action_set_definitions for args in _broken_calls(s)]
    steps = twin.run(calls)
    # every tool with a typed parameter was given broken arguments
    assert {s.tool for s in steps[1:]} == {s.name for s in env.action_set_definitions if _typed(s)}
    assert [s.outcome for s in steps] == [Outcome.ERROR] * len(steps)
    assert all(s.changes == [] for s in steps)
    assert twin.state == env.task_initial_state


def test_every_reference_env_has_a_package_twin() -> None:
    suite = {p.stem for p in (reference_suite_dir() / "world_model_configs").glob("*.json")}
    assert suite and suite <= set(TWINS)


@pytest.mark.parametrize("task", _reference_tasks(), ids=lambda t: str(t.task_id))
def test_a_reference_plan_solves_its_task_on_the_twin(task: TaskRecord) -> None:
    assert task.reference_plan is not None
    env = load_env(reference_suite_dir(), task.env_name)
    twin = _twin(env)
    steps = twin.run((s.tool, s.arguments) for s in task.reference_plan.steps)
    assert [s.outcome for s in steps] == [Outcome.SUCCESS] * len(steps)
    plan = Plan(
        steps=[Step(s.tool, s.arguments, []) for s in task.reference_plan.steps],
        answer=task.reference_plan.answer,
    )
    answer = render_answer(plan, {n: s.observation for n, s in enumerate(steps, start=1)})
    calls = [ToolCall(tool=s.tool, arguments=s.arguments) for s in steps]
    facts = AnswerContainsCheck(values=task.reference_plan.answer_facts)
    assert run_check(facts, calls, answer).passed, answer
    results = run_checks(task.checks or [], calls, answer, twin.state)
    assert [r.detail for r in results if not r.passed] == []
    assert task.checks  # each reference task has checks to hold

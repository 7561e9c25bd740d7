from conftest import sample_row
from occubench.analysis import comparable_groups


def rows(**fields):
    return [sample_row(task_id=t, env_name="env", **fields) for t in (1, 2)]


def test_one_grading_keeps_the_label_plain():
    (group,) = comparable_groups(rows(verifier_model="j/one"))
    assert group.label == "2 tasks (1, 2), occubench protocol"
    assert (group.verifier, group.regraded, len(group.rows)) == ("j/one", False, 2)


def test_each_verifier_is_a_group_of_its_own():
    groups = comparable_groups([*rows(verifier_model="j/one"), *rows(verifier_model="j/two")])
    assert [g.label for g in groups] == [
        "2 tasks (1, 2), occubench protocol, verifier j/one",
        "2 tasks (1, 2), occubench protocol, verifier j/two",
    ]
    assert [{r.verifier_model for r in g.rows} for g in groups] == [{"j/one"}, {"j/two"}]


def test_a_regrading_by_the_same_model_is_apart_and_after_its_source():
    regraded = rows(verifier_model="j/one", regraded_from="/logs/a.eval", run_id="run2")
    groups = comparable_groups([*regraded, *rows(verifier_model="j/one"), *rows()])
    assert [g.label for g in groups] == [
        "2 tasks (1, 2), occubench protocol, no verifier bound",
        "2 tasks (1, 2), occubench protocol, verifier j/one",
        "2 tasks (1, 2), occubench protocol, verifier j/one (regraded)",
    ]
    assert [g.regraded for g in groups] == [False, False, True]


def talked(user_model, **fields):
    """Rows of a run whose tasks talked to a simulated user of ``user_model``."""
    return rows(user_model=user_model, user_turns=2, user_errors=0, **fields)


def test_runs_whose_tasks_talked_to_different_user_models_are_never_grouped():
    groups = comparable_groups(
        [*talked("u/one", agent_model="a/x"), *talked("u/two", agent_model="a/y")]
    )
    assert [g.label for g in groups] == [
        "2 tasks (1, 2), occubench protocol, user u/one",
        "2 tasks (1, 2), occubench protocol, user u/two",
    ]
    assert [g.user for g in groups] == ["u/one", "u/two"]
    assert [{r.agent_model for r in g.rows} for g in groups] == [{"a/x"}, {"a/y"}]


def test_one_user_model_keeps_the_label_plain_and_is_named_on_the_group():
    (group,) = comparable_groups([*talked("u/one"), *talked("u/one", agent_model="a/y")])
    assert group.label == "2 tasks (1, 2), occubench protocol"
    assert group.user == "u/one" and len(group.runs) == 2


def test_a_user_model_bound_on_tasks_without_a_user_does_not_split_a_group():
    """Tasks without a user never call the model: the run measures what one without it does."""
    bound = rows(user_model="u/one", agent_model="a/x")  # user_turns None: no user brief
    (group,) = comparable_groups([*bound, *rows(agent_model="a/y")])
    assert group.user is None and len(group.runs) == 2


def test_a_run_with_a_user_is_apart_from_one_without():
    groups = comparable_groups([*talked("u/one", agent_model="a/x"), *rows(agent_model="a/y")])
    assert sorted(g.label for g in groups) == [
        "2 tasks (1, 2), occubench protocol, no simulated user",
        "2 tasks (1, 2), occubench protocol, user u/one",
    ]

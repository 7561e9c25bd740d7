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

import pytest

from occubench.errors import UsageError
from occubench.worlds import (
    EntrySource,
    PathStep,
    ProblemKind,
    World,
    WorldEntry,
    merge_worlds,
    verify_world,
    world_stats,
)
from world_fixtures import CONTEXT, START, chain, entry, segment, write_world

A, B, C = ("open", {"id": 1}), ("read", {"page": 1}), ("read", {"page": 2})


def tree() -> list[WorldEntry]:
    """Two paths that share their first call: open, read 1 / open, read 2, and one failed."""
    failed = PathStep.of("read", {"page": 3}, failed={"error": "timeout"})
    after_failure = WorldEntry.record(
        CONTEXT.digest(),
        [PathStep.of(*A), failed],
        PathStep.of(*C),
        text="{}",
        author="Grace",
        source=EntrySource.PERSON,
        created=START,
    )
    return [entry(A), entry(A, B), entry(A, C, minute=3), after_failure]


def test_stats_count_the_prefix_tree_and_who_made_it(tmp_path):
    folder = write_world(tmp_path / "w", tree())
    stats = world_stats(folder)
    assert (stats.entries, stats.keys, stats.duplicates, stats.conflicts) == (4, 4, 0, 0)
    assert (stats.roots, stats.leaves, stats.deepest) == (1, 3, 3)
    assert [(a.source, a.author, a.entries) for a in stats.authors] == [
        (EntrySource.PERSON, "Grace", 1),
        (EntrySource.SIMULATOR, "mockllm/simulator", 3),
    ]
    (context,) = stats.contexts
    assert (context.digest, context.model, context.keys) == (CONTEXT.digest(), CONTEXT.model, 4)
    assert stats.first == START and stats.last.minute == 3
    assert stats.segments == 1 and stats.bytes > 0 and stats.unread == 0
    assert stats.digest == World.open(folder, writable=False).digest()


def test_stats_count_an_entry_written_twice_once_and_a_second_answer_as_a_conflict(tmp_path):
    first = entry(A)
    folder = write_world(tmp_path / "w", [first, first, entry(A, answer="other", minute=1)])
    stats = world_stats(folder)
    assert (stats.entries, stats.keys, stats.duplicates, stats.conflicts) == (2, 1, 0, 1)
    same_answer = entry(A, author="someone else", minute=2)
    folder = write_world(tmp_path / "v", [first, same_answer])
    stats = world_stats(folder)
    assert (stats.entries, stats.keys, stats.duplicates, stats.conflicts) == (2, 1, 1, 0)


def test_a_clean_world_verifies_clean(tmp_path):
    found = verify_world(write_world(tmp_path / "w", tree()))
    assert found.clean and (found.entries, found.keys, found.contexts) == (4, 4, 1)


def test_verify_names_contexts_that_entries_reference_and_the_world_lacks(tmp_path):
    other = CONTEXT.model_copy(update={"variant": 3})
    folder = write_world(tmp_path / "w", chain(2))
    with segment(folder).open("ab") as out:
        for made in [entry(A, context=other), entry(A, B, context=other)]:
            out.write(made.line())
    found = verify_world(folder)
    (problem,) = found.problems
    assert problem.kind is ProblemKind.MISSING_CONTEXT and problem.line == 3
    assert f"2 entries reference context {other.digest()[:16]}" in problem.detail


def test_two_worlds_written_apart_merge_and_their_conflict_is_listed(tmp_path):
    shared = entry(A)  # both recorded it: the same entry, kept once
    one = write_world(tmp_path / "one", [shared, entry(A, B, answer="first", minute=1)])
    two = write_world(
        tmp_path / "two", [shared, entry(A, B, answer="second", minute=2), entry(A, C)]
    )
    merged = merge_worlds([one, two], tmp_path / "merged")
    assert (merged.entries, merged.duplicates, merged.conflicts, merged.contexts) == (4, 1, 1, 1)
    assert merged.unread == 0 and not merged.packed
    with World.open(tmp_path / "merged", writable=False) as world:
        assert len(world.keys()) == 3
        assert world.lookup(entry(A, B).key).observation == {"result": "first"}
        assert world.digest() == merged.digest
    found = verify_world(tmp_path / "merged")
    (problem,) = found.problems
    assert problem.kind is ProblemKind.CONFLICT and problem.line == 2
    assert "2 different answers" in problem.detail and "merged.jsonl:3 (" in problem.detail
    assert world_stats(tmp_path / "merged").description.startswith("merged from")


def test_the_earlier_answer_wins_whatever_the_order_of_the_merge(tmp_path):
    one = write_world(tmp_path / "one", [entry(A, answer="late", minute=9)])
    two = write_world(tmp_path / "two", [entry(A, answer="early", minute=1)])
    for order, name in [([one, two], "m1"), ([two, one], "m2")]:
        merge_worlds(order, tmp_path / name)
        with World.open(tmp_path / name, writable=False) as world:
            assert world.lookup(entry(A).key).observation == {"result": "early"}
    assert world_stats(tmp_path / "m1").digest == world_stats(tmp_path / "m2").digest


def test_a_merge_leaves_torn_and_bad_lines_out_and_counts_them(tmp_path):
    first, second = chain(2)
    one = write_world(tmp_path / "one", [first])
    with segment(one).open("ab") as out:
        out.write(b"{broken\n" + second.line()[:20])
    merged = merge_worlds([one], tmp_path / "merged")
    assert merged.entries == 1 and merged.unread == 2
    assert verify_world(tmp_path / "merged").clean


def test_a_merge_never_overwrites_and_needs_worlds(tmp_path):
    one = write_world(tmp_path / "one", chain(1))
    with pytest.raises(UsageError, match="exists already"):
        merge_worlds([one], one)
    with pytest.raises(UsageError, match="no world at"):
        merge_worlds([tmp_path / "none"], tmp_path / "out")
    with pytest.raises(UsageError, match="at least one world"):
        merge_worlds([], tmp_path / "out")
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []

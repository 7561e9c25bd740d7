import asyncio
import json
import logging
import os
import tracemalloc

import pytest

from occubench.errors import UsageError
from occubench.worlds import (
    EntryTooLarge,
    ObservationSource,
    PathStep,
    ProblemKind,
    World,
    WorldEntry,
    WorldLimits,
    canonical_json,
    entry_key,
    text_digest,
    verify_world,
)
from world_fixtures import CONTEXT, chain, entry, insert_long_line, segment, write_world


def test_a_recorded_path_is_answered_from_the_world(tmp_path):
    entries = chain(3)
    write_world(tmp_path / "w", entries)
    with World.open(tmp_path / "w", writable=False) as world:
        for made in entries:
            found = world.lookup(made.key)
            assert found == made
        assert world.lookup("0" * 64) is None
        assert world.contexts() == {CONTEXT.digest(): CONTEXT}
        assert [e.key for e in world.entries()] == [e.key for e in entries]
        assert world.problems == [] and world.tails() == []


def test_a_missing_world_is_made_only_for_writing(tmp_path):
    with pytest.raises(UsageError, match="no world at"):
        World.open(tmp_path / "none", writable=False)
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "notes.txt").write_text("x")
    with pytest.raises(UsageError, match="is not a world"):
        World.open(tmp_path / "other", writable=True)
    with World.open(tmp_path / "new", writable=True, description="mine") as world:
        assert world.manifest.description == "mine" and world.keys() == []
    with World.open(tmp_path / "new", writable=True, description="ignored") as world:
        assert world.manifest.description == "mine"


def test_a_manifest_of_another_format_is_refused_by_name(tmp_path):
    write_world(tmp_path / "w", [])
    manifest = tmp_path / "w" / "world.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "format": 2}))
    with pytest.raises(UsageError, match=r"world\.json: world format 2; this occubench reads"):
        World.open(tmp_path / "w", writable=False)
    manifest.write_text("[" * 100_000)
    with pytest.raises(UsageError, match="not a world manifest"):
        World.open(tmp_path / "w", writable=False)


def test_entries_need_their_context_and_a_writable_world(tmp_path):
    made = entry(("get", {"id": 1}))
    with World.open(tmp_path / "w", writable=True) as world:
        with pytest.raises(ValueError, match="was not added"):
            world.append(made)
        world.add_context(CONTEXT)
        world.append(made)
        wrong = made.model_copy(update={"key": "1" * 64})
        with pytest.raises(ValueError, match="not its path's key"):
            world.append(wrong)
    with World.open(tmp_path / "w", writable=False) as world:
        with pytest.raises(ValueError, match="read-only"):
            world.append(made)
        with pytest.raises(ValueError, match="read-only"):
            asyncio.run(world.answer(made.key, lambda: None))  # type: ignore[arg-type]


def test_contexts_are_written_once(tmp_path):
    with (
        World.open(tmp_path / "w", writable=True) as one,
        World.open(tmp_path / "w", writable=True) as two,
    ):
        assert one.add_context(CONTEXT) == two.add_context(CONTEXT) == CONTEXT.digest()
        other = CONTEXT.model_copy(update={"variant": 1})
        two.add_context(other)
        one.refresh()
        assert set(one.contexts()) == {CONTEXT.digest(), other.digest()}
    assert len((tmp_path / "w" / "contexts.jsonl").read_text().splitlines()) == 2


def test_a_miss_reads_what_another_writer_appended(tmp_path):
    first, second = chain(2)
    with (
        World.open(tmp_path / "w", writable=True) as one,
        World.open(tmp_path / "w", writable=True) as two,
    ):
        one.add_context(CONTEXT)
        two.add_context(CONTEXT)
        one.append(first)
        assert two.lookup(first.key) == first  # read on the miss
        two.append(second)
        assert one.lookup(second.key) == second
        assert len(list((tmp_path / "w" / "segments").iterdir())) == 2


def world_with_maker(tmp_path):
    world = World.open(tmp_path / "w", writable=True)
    world.add_context(CONTEXT)
    return world


def test_tasks_asking_one_key_at_once_make_it_once(tmp_path):
    made = entry(("get", {"id": 1}))
    calls = []

    async def make() -> WorldEntry:
        calls.append(1)
        for _ in range(5):
            await asyncio.sleep(0)  # let every other task ask meanwhile
        return made

    async def ask_all():
        return await asyncio.gather(*[world.answer(made.key, make) for _ in range(20)])

    with world_with_maker(tmp_path) as world:
        answers = asyncio.run(ask_all())
    assert len(calls) == 1
    sources = [a.source for a in answers]
    assert sources.count(ObservationSource.SIMULATOR) == 1
    assert sources.count(ObservationSource.WORLD) == 19
    assert {a.entry.digest for a in answers} == {made.digest}
    assert sorted(os.listdir(tmp_path / "w" / "locks")) == ["contexts.lock"]  # key locks gone
    with World.open(tmp_path / "w", writable=False) as world:
        assert len(list(world.entries())) == 1


def test_when_make_fails_nothing_is_recorded_and_the_next_waiter_tries(tmp_path):
    made = entry(("get", {"id": 1}))
    calls = []

    async def make() -> WorldEntry:
        calls.append(1)
        await asyncio.sleep(0)
        if len(calls) == 1:
            raise RuntimeError("the simulator gave up")
        return made

    async def ask_all():
        return await asyncio.gather(
            *[world.answer(made.key, make) for _ in range(5)], return_exceptions=True
        )

    with world_with_maker(tmp_path) as world:
        answers = asyncio.run(ask_all())
    failed = [a for a in answers if isinstance(a, RuntimeError)]
    assert len(failed) == 1 and len(calls) == 2
    assert {a.entry.digest for a in answers if not isinstance(a, Exception)} == {made.digest}


def test_make_must_answer_the_key_asked(tmp_path):
    made = entry(("get", {"id": 1}))

    async def make() -> WorldEntry:
        return made

    with world_with_maker(tmp_path) as world:
        with pytest.raises(ValueError, match="not a world key"):
            asyncio.run(world.answer("../../x", make))
        with pytest.raises(ValueError, match="make\\(\\) gave an entry for key"):
            asyncio.run(world.answer("1" * 64, make))


def test_an_entry_beyond_the_limits_is_answered_but_not_recorded(tmp_path, caplog):
    call = PathStep.of("get", {})
    huge = WorldEntry.record(CONTEXT.digest(), [], call, text="x" * 5000, author="m")

    async def make() -> WorldEntry:
        return huge

    world = World.open(tmp_path / "w", writable=True, limits=WorldLimits(line_bytes=2000))
    with world, caplog.at_level(logging.WARNING):
        world.add_context(CONTEXT)
        answer = asyncio.run(world.answer(huge.key, make))
        assert answer.source is ObservationSource.SIMULATOR and not answer.recorded
        assert answer.entry.text == huge.text
        assert world.lookup(huge.key) is None
        with pytest.raises(EntryTooLarge):
            world.append(huge)
    assert "not recorded" in caplog.text


def test_the_first_entry_of_a_key_by_time_is_the_one_given(tmp_path):
    late = entry(("get", {"id": 1}), answer="late", minute=5)
    early = entry(("get", {"id": 1}), answer="early", minute=1)
    write_world(tmp_path / "w", [late, early])
    with World.open(tmp_path / "w", writable=False) as world:
        assert world.lookup(late.key).text == early.text
        assert len(list(world.entries())) == 2


def test_the_digest_is_of_the_entries_answered_whatever_the_order(tmp_path):
    entries = chain(4)
    write_world(tmp_path / "a", entries)
    write_world(tmp_path / "b", list(reversed(entries)))
    write_world(tmp_path / "c", entries[:3])
    digests = [World.open(tmp_path / n, writable=False).digest() for n in "abc"]
    assert digests[0] == digests[1] != digests[2]


# hostile lines: each is ignored on read, reported by verify, and the lines after it are read


def line_of(made: WorldEntry) -> bytes:
    return made.line()


def tampered(made: WorldEntry, **change) -> bytes:
    value = json.loads(made.line())
    value.update(change)
    return (json.dumps(value) + "\n").encode()


def resealed(made: WorldEntry, **change) -> bytes:
    """A line changed and given the digest of its new content (a digest is no signature)."""
    value = json.loads(made.line())
    value.update(change)
    value.pop("digest")
    value["digest"] = text_digest(canonical_json(value))
    return (json.dumps(value) + "\n").encode()


@pytest.mark.parametrize(
    ("bad", "kind", "detail"),
    [
        (lambda e: b"x" * 5000 + b"\n", ProblemKind.UNREADABLE, "longer than 4096 bytes"),
        (lambda e: b"[" * 4000 + b"\n", ProblemKind.UNREADABLE, "nested deeper than 103"),
        (lambda e: b'{"a": "\xff"}\n', ProblemKind.UNREADABLE, "not UTF-8"),
        (lambda e: b"{not json\n", ProblemKind.UNREADABLE, "not JSON"),
        (lambda e: b'{"x": NaN}\n', ProblemKind.UNREADABLE, "not JSON"),
        (lambda e: b"[1]\n", ProblemKind.UNREADABLE, "not a JSON object"),
        (lambda e: b"\n", ProblemKind.UNREADABLE, "not JSON"),
        (lambda e: tampered(e, text="a lie"), ProblemKind.DIGEST, "does not match"),
        (lambda e: tampered(e, digest=None), ProblemKind.DIGEST, "without its digest"),
        (lambda e: resealed(e, author=""), ProblemKind.UNREADABLE, "author"),
        (lambda e: resealed(e, key="1" * 64), ProblemKind.KEY, "is not its path's key"),
        (
            lambda e: resealed(e, path=[{"tool": "other", "arguments": {}}]),
            ProblemKind.KEY,
            "is not its path's key",
        ),
        (
            lambda e: resealed(e, call={"tool": "get", "arguments": {}, "failed": {"e": 1}}),
            ProblemKind.UNREADABLE,
            "call.failed",
        ),
    ],
)
def test_a_bad_line_is_ignored_and_reported_with_its_file_and_line(tmp_path, bad, kind, detail):
    first, second, third = chain(3)
    folder = write_world(tmp_path / "w", [first])
    with segment(folder).open("ab") as out:
        out.write(bad(second))
        out.write(line_of(third))
    with World.open(folder, writable=False, limits=WorldLimits(line_bytes=4096)) as world:
        assert world.lookup(second.key) is None
        assert world.lookup(third.key) == third and world.lookup(first.key) == first
        (problem,) = world.problems
    assert problem.kind is kind and problem.line == 2 and detail in problem.detail
    assert problem.file == str(segment(folder))
    found = verify_world(folder, limits=WorldLimits(line_bytes=4096))
    assert [(p.kind, p.line) for p in found.problems] == [(kind, 2)]


def test_a_torn_line_is_ignored_reported_and_later_appends_still_work(tmp_path):
    first, second, third = chain(3)
    folder = write_world(tmp_path / "w", [first])
    torn = segment(folder)
    with torn.open("ab") as out:  # a writer killed in the middle of its second line
        out.write(line_of(second)[:50])
    with World.open(folder, writable=True) as world:
        assert world.problems == []  # maybe still being written: not a problem yet
        assert world.lookup(second.key) is None
        world.append(second)
        world.append(third)
    with World.open(folder, writable=False) as world:
        assert world.lookup(second.key) == second and world.lookup(third.key) == third
    found = verify_world(folder)
    (problem,) = found.problems
    assert problem.kind is ProblemKind.TORN and problem.file == str(torn) and problem.line == 2
    assert "50 bytes" in problem.detail
    assert found.entries == 3


def test_a_line_being_written_is_read_once_it_is_whole(tmp_path):
    first, second = chain(2)
    folder = write_world(tmp_path / "w", [first])
    whole = line_of(second)
    with World.open(folder, writable=False) as world:
        with segment(folder).open("ab") as out:
            out.write(whole[:30])
            out.flush()
            assert world.lookup(second.key) is None
            out.write(whole[30:])
        assert world.lookup(second.key) == second
        assert world.problems == []


def test_more_entries_than_the_limit_are_refused_by_file_and_line(tmp_path):
    folder = write_world(tmp_path / "w", chain(5))
    with pytest.raises(UsageError, match=r"\.jsonl:4: the world holds more than 3 entries"):
        World.open(folder, writable=False, limits=WorldLimits(entries=3))


def test_more_segments_than_the_limit_are_refused(tmp_path):
    folder = write_world(tmp_path / "w", chain(1))
    for n in range(3):
        (folder / "segments" / f"extra-{n}.jsonl").write_bytes(b"")
    with pytest.raises(UsageError, match="more than 2 segments"):
        World.open(folder, writable=False, limits=WorldLimits(segments=2))


def test_a_link_or_a_fifo_among_the_segments_is_refused(tmp_path):
    folder = write_world(tmp_path / "w", chain(1))
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the world\n")
    link = folder / "segments" / "link.jsonl"
    link.symlink_to(secret)
    with pytest.raises(UsageError, match="a symbolic link: refused"):
        World.open(folder, writable=False)
    link.unlink()
    os.mkfifo(folder / "segments" / "fifo.jsonl")  # reading one would wait forever
    with pytest.raises(UsageError, match="not a plain file: refused"):
        World.open(folder, writable=False)


def test_a_file_that_is_not_a_segment_is_reported_and_not_read(tmp_path):
    folder = write_world(tmp_path / "w", chain(1))
    (folder / "segments" / "notes.txt").write_text("hello\n")
    found = verify_world(folder)
    (problem,) = found.problems
    assert problem.kind is ProblemKind.FILE and problem.file.endswith("notes.txt")


def test_keys_of_entries_read_back_are_recomputed(tmp_path):
    made = entry(("get", {"id": 1}))
    assert made.key == entry_key(made.context_digest, made.path, made.call)
    folder = write_world(tmp_path / "w", [made])
    forged = resealed(made, call={"tool": "get", "arguments": {"id": 2}})
    segment(folder).write_bytes(forged)
    other_key = entry_key(made.context_digest, [], PathStep.of("get", {"id": 2}))
    with World.open(folder, writable=False) as world:
        assert world.lookup(made.key) is None and world.lookup(other_key) is None


def test_a_world_that_cannot_be_made_is_bad_input(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(UsageError, match="a world cannot be made here"):
        World.open(tmp_path / "file" / "w", writable=True)


def test_a_full_world_records_no_more(tmp_path):
    first, second = chain(2)
    with World.open(tmp_path / "w", writable=True, limits=WorldLimits(entries=1)) as world:
        world.add_context(CONTEXT)
        world.append(first)
        with pytest.raises(UsageError, match="holds 1 entries, the limit: not recorded"):
            world.append(second)
    assert len(segment(tmp_path / "w").read_bytes().splitlines()) == 1


def test_a_segment_of_junk_lines_is_refused_past_the_unread_lines_bound(tmp_path):
    """The attack: a small segment of a million junk lines (each a problem record)."""
    folder = write_world(tmp_path / "w", chain(2))
    (folder / "segments" / "junk.jsonl").write_bytes(b"x\n" * 999_000)
    with pytest.raises(UsageError, match="more than 10000 lines that cannot be read: not a world"):
        World.open(folder, writable=False)


def test_junk_past_the_unread_bytes_bound_is_refused(tmp_path):
    folder = write_world(tmp_path / "w", chain(2))
    (folder / "segments" / "junk.jsonl").write_bytes((b"y" * 2**20 + b"\n") * 17)
    with pytest.raises(UsageError, match=f"more than {16 * 2**20} bytes of lines"):
        World.open(folder, writable=False)


def test_one_line_past_the_line_bound_is_skipped_in_bounded_memory_and_reported(tmp_path):
    """The report: intact entries and one 17 MiB garbage line refused the whole world."""
    entries = chain(3)
    folder = write_world(tmp_path / "w", entries)
    line = insert_long_line(segment(folder), after=1)
    with segment(folder).open("ab") as out:
        out.write(b"x\n")  # one more junk line: the long one leaves the bytes bound whole
    tracemalloc.start()
    try:
        with World.open(folder, writable=False) as world:
            peak = tracemalloc.get_traced_memory()[1]
            assert [(p.line, p.detail) for p in world.problems] == [
                (line, f"line longer than {16 * 2**20} bytes: not read"),
                (5, "not JSON: Expecting value"),
            ]
            assert [world.lookup(e.key) for e in entries] == entries
            assert [r.line for r in world.records()] == [1, 3, 4]
    finally:
        tracemalloc.stop()
    assert peak < 4 * 2**20  # a chunk of the long line at a time, never the line bound's worth


def test_lines_past_the_line_bound_count_against_the_unread_lines_bound(tmp_path):
    folder = write_world(tmp_path / "w", chain(2))
    limits = WorldLimits(line_bytes=4096, unread_lines=3)
    for _ in range(3):
        insert_long_line(segment(folder), after=1, size=5000)
    with World.open(folder, writable=False, limits=limits) as world:
        assert len(world.keys()) == 2 and len(world.problems) == 3
    insert_long_line(segment(folder), after=1, size=5000)
    with pytest.raises(UsageError, match="more than 3 lines that cannot be read: not a world"):
        World.open(folder, writable=False, limits=limits)


def test_a_line_of_the_line_bound_is_read_and_one_byte_more_is_not(tmp_path):
    limits = WorldLimits(line_bytes=3 * 2**20)  # past one chunk: measured, then read back
    folder = write_world(tmp_path / "w", chain(1))
    insert_long_line(segment(folder), after=1, size=limits.line_bytes)
    insert_long_line(segment(folder), after=2, size=limits.line_bytes + 1)
    with World.open(folder, writable=False, limits=limits) as world:
        assert [(p.line, p.detail.split(":")[0]) for p in world.problems] == [
            (2, "not JSON"),
            (3, f"line longer than {limits.line_bytes} bytes"),
        ]


def test_a_few_junk_lines_are_listed_and_the_world_still_answers(tmp_path):
    entries = chain(2)
    folder = write_world(tmp_path / "w", entries)
    (folder / "segments" / "junk.jsonl").write_bytes(b"x\n" * 3)
    with World.open(folder, writable=False) as world:
        assert [p.kind for p in world.problems] == [ProblemKind.UNREADABLE] * 3
        assert world.lookup(entries[0].key) == entries[0]

"""occubench world stats|verify|merge|export: tables, exit codes, bad input."""

import json

from typer.testing import CliRunner

from occubench.cli import app
from world_fixtures import chain, entry, insert_long_line, segment, write_world

runner = CliRunner()


def row(output: str, name: str) -> str:
    """The table row whose first cell is ``name``."""
    return next(line for line in output.splitlines() if line.strip("│┃ ").startswith(name))


def test_stats_prints_the_world_its_contexts_and_authors(tmp_path):
    folder = write_world(tmp_path / "w", [*chain(3), entry(("list", {}), author="Ada Lovelace")])
    out = tmp_path / "stats.json"
    result = runner.invoke(app, ["world", "stats", str(folder), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "4" in row(result.output, "entries") and "2" in row(result.output, "paths (leaves)")
    assert "3" in row(result.output, "longest path (calls)")
    assert "mockllm/simulator" in result.output and "Ada Lovelace" in result.output
    assert json.loads(out.read_text())["keys"] == 4


def test_verify_exits_0_when_clean_and_1_with_the_problems_listed(tmp_path):
    folder = write_world(tmp_path / "w", chain(2))
    clean = runner.invoke(app, ["world", "verify", str(folder)])
    assert clean.exit_code == 0 and "No problems found." in clean.output
    with segment(folder).open("ab") as out:
        out.write(b'{"not": "an entry"}\n')
        out.write(chain(3)[2].line()[:40])  # a writer killed mid-line
    found = runner.invoke(app, ["world", "verify", str(folder)])
    assert found.exit_code == 1, found.output
    assert "Problems (2)" in found.output
    assert "without its digest" in row(found.output, "digest")
    assert "torn" in found.output and "last line has no newline" in found.output


def test_verify_of_something_that_is_not_a_world_exits_2_with_one_line(tmp_path):
    (tmp_path / "x").mkdir()
    result = runner.invoke(app, ["world", "verify", str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "Error" in result.output and "is not a world (it has no world.json)" in result.output
    assert "Traceback" not in result.output
    bad = tmp_path / "bad.world.zip"
    bad.write_bytes(b"PK junk")
    result = runner.invoke(app, ["world", "verify", str(bad)])
    assert result.exit_code == 2 and "not a packed world" in result.output


def test_merge_and_export_write_new_worlds_and_never_overwrite(tmp_path):
    one = write_world(tmp_path / "one", chain(2))
    two = write_world(tmp_path / "two", [entry(("lookup", {"id": "step-0"}), answer="x", minute=5)])
    merged = runner.invoke(
        app, ["world", "merge", str(one), str(two), "--out", str(tmp_path / "m")]
    )
    assert merged.exit_code == 0, merged.output
    assert "1" in row(merged.output, "conflicts (kept)") and "3" in row(merged.output, "entries")
    assert runner.invoke(app, ["world", "verify", str(tmp_path / "m")]).exit_code == 1

    packed = tmp_path / "m.world.zip"
    exported = runner.invoke(app, ["world", "export", str(tmp_path / "m"), "--out", str(packed)])
    assert exported.exit_code == 0, exported.output
    assert "packed (read-only)" in exported.output and "file SHA-256" in exported.output
    again = runner.invoke(app, ["world", "export", str(tmp_path / "m"), "--out", str(packed)])
    assert again.exit_code == 2 and "exists already" in again.output
    back = runner.invoke(app, ["world", "export", str(packed), "--out", str(tmp_path / "back")])
    assert back.exit_code == 0 and "folder" in row(back.output, "form")


def test_a_long_garbage_line_is_reported_and_the_world_still_read(tmp_path):
    folder = write_world(tmp_path / "w", chain(3))
    line = insert_long_line(segment(folder), after=1)
    with segment(folder).open("ab") as out:
        out.write(b"x\n")  # a short junk line beside it: far from a world of junk
    found = runner.invoke(app, ["world", "verify", str(folder)])
    assert found.exit_code == 1, found.output
    assert "Problems (2)" in found.output and "3 entries, 3 keys" in found.output
    problem = row(found.output, "unreadable")
    assert segment(folder).name in problem and f"│ {line} " in problem
    assert "line longer than 16777216 bytes: not read" in " ".join(found.output.split())
    out = tmp_path / "stats.json"
    stats = runner.invoke(app, ["world", "stats", str(folder), "--out", str(out)])
    assert stats.exit_code == 0, stats.output
    counted = json.loads(out.read_text())
    assert counted["entries"] == 3 and counted["keys"] == 3 and counted["unread"] == 2

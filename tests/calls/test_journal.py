"""Call journals: written durably and privately, read back only when intact and ours."""

from __future__ import annotations

import json
import logging
import os
import stat

import pytest
from inspect_ai.model import ChatMessageAssistant, ContentReasoning, ContentText, ModelOutput

from occubench.calls import (
    AttemptChain,
    Journal,
    JournalPlace,
    JournalProblem,
    read_journal,
    remove_all_journals,
    remove_journals,
)
from occubench.calls import _journal as journal_module

SAMPLE = 11
EPOCH = 1


def answer(text: str) -> ModelOutput:
    """An answer with a signed reasoning block before its text."""
    output = ModelOutput.from_content("claude-test", text)
    output.choices[0].message = ChatMessageAssistant(
        content=[
            ContentReasoning(reasoning=f"thinking about {text}", signature=f"sig-{text}"),
            ContentText(text=text),
        ],
        model="claude-test",
    )
    return output


def written(place: JournalPlace, calls: list[tuple[str, str]]) -> Journal:
    """A journal of these calls (key, answer text), closed."""
    journal = Journal(place, SAMPLE, EPOCH)
    assert journal.seed() == 0
    for key, text in calls:
        journal.append(key, answer(text))
    journal.close()
    return journal


@pytest.fixture
def place(tmp_path) -> JournalPlace:
    return JournalPlace(tmp_path / "logs", "config-a")


def test_a_journal_is_private_and_replays_its_answers_byte_for_byte(place):
    journal = Journal(place, SAMPLE, EPOCH)
    journal.seed()
    given = [("k1", answer("one")), ("k2", answer("two")), ("k1", answer("three"))]
    for key, output in given:
        journal.append(key, output)
    journal.close()
    path = place.path(SAMPLE, EPOCH)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(place.folder.stat().st_mode) == 0o700
    header, *lines = path.read_text().splitlines()
    assert json.loads(header)["config"] == "config-a" and len(lines) == 3
    again = Journal(place, SAMPLE, EPOCH)
    assert again.seed() == 3
    first = again.take("k1")
    assert first is not None
    assert first.model_dump_json() == given[0][1].model_dump_json()
    reasoning = first.choices[0].message.content[0]
    assert isinstance(reasoning, ContentReasoning) and reasoning.signature == "sig-one"
    assert [again.take(k).completion for k in ("k1", "k2")] == ["three", "two"]  # type: ignore[union-attr]
    assert again.take("k1") is None  # its answers are used up


def test_the_first_call_that_matches_none_ends_the_replay_and_keeps_only_what_was_used(place):
    written(place, [("k1", "one"), ("k2", "two"), ("k3", "three")])
    chain = AttemptChain(Journal(place, SAMPLE, EPOCH))
    assert chain.journal is not None and chain.journal.seed() == 3
    taken = chain.take("k1")
    assert taken is not None and taken[1] is True
    assert chain.take("other") is None  # paid from here
    assert chain.take("k2") is None  # the journal is closed: never replayed past a miss
    chain.put("other", answer("paid"))
    chain.end()
    assert [e.key for e in read_journal(place, SAMPLE, EPOCH)] == ["k1", "other"]


def test_a_restart_within_the_run_replays_what_the_journal_gave(place):
    written(place, [("k1", "one")])
    chain = AttemptChain(Journal(place, SAMPLE, EPOCH))
    assert chain.journal is not None and chain.journal.seed() == 1
    chain.begin(1)
    assert chain.take("k1") is not None
    chain.begin(2)
    again = chain.take("k1")
    assert again is not None and again[1] is False  # from this run's record now


def test_a_sample_that_asks_its_models_again_empties_its_journal(place):
    written(place, [("k1", "one")])
    chain = AttemptChain(Journal(place, SAMPLE, EPOCH))
    assert chain.journal is not None and chain.journal.seed() == 1
    chain.forget()
    chain.end()
    assert read_journal(place, SAMPLE, EPOCH) == []


def damage_torn(text: str) -> str:
    return text[:-7]


def damage_edited(text: str) -> str:
    return text.replace("two", "TWO", 1)


def damage_config(text: str) -> str:
    return text.replace('"config":"config-a"', '"config":"config-b"', 1)


def damage_version(text: str) -> str:
    return text.replace(f'"version":"{journal_module.occubench_version()}"', '"version":"0.0.1"')


def damage_not_json(text: str) -> str:
    header, rest = text.split("\n", 1)
    return f"{header}\nnot json\n{rest}"


@pytest.mark.parametrize(
    ("damage", "why"),
    [
        (damage_torn, "cut short"),
        (damage_edited, "line 3: its checksum does not match"),
        (damage_config, "line 1: config is 'config-b'"),
        (damage_version, "line 1: version is '0.0.1'"),
        (damage_not_json, "line 2: not a journal entry"),
    ],
    ids=["torn", "edited", "other-config", "other-version", "not-json"],
)
def test_a_damaged_or_foreign_journal_is_ignored_with_a_warning_naming_it(
    place, caplog, damage, why
):
    written(place, [("k1", "one"), ("k2", "two")])
    path = place.path(SAMPLE, EPOCH)
    path.write_text(damage(path.read_text()))
    with pytest.raises(JournalProblem, match=why):
        read_journal(place, SAMPLE, EPOCH)
    journal = Journal(place, SAMPLE, EPOCH)
    with caplog.at_level(logging.WARNING):
        assert journal.seed() == 0
    assert str(path) in caplog.text and why in caplog.text
    assert journal.take("k1") is None
    journal.append("k9", answer("fresh"))  # the sample's new calls: a fresh journal
    journal.close()
    assert [e.key for e in read_journal(place, SAMPLE, EPOCH)] == ["k9"]


def test_a_journal_that_is_a_link_is_neither_read_nor_written_through(place, tmp_path):
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("precious\n")
    place.folder.mkdir(parents=True)
    place.path(SAMPLE, EPOCH).symlink_to(target)
    with pytest.raises(JournalProblem, match="cannot be opened as a plain file"):
        read_journal(place, SAMPLE, EPOCH)
    journal = Journal(place, SAMPLE, EPOCH)
    assert journal.seed() == 0
    journal.append("k1", answer("one"))
    journal.close()
    assert target.read_text() == "precious\n"
    assert not place.path(SAMPLE, EPOCH).is_symlink()  # replaced by a journal of its own
    assert [e.key for e in read_journal(place, SAMPLE, EPOCH)] == ["k1"]


def test_a_journal_stops_at_its_bound(tmp_path, caplog):
    place = JournalPlace(tmp_path, "config-a", max_bytes=2_000)
    journal = Journal(place, SAMPLE, EPOCH)
    journal.seed()
    with caplog.at_level(logging.WARNING):
        for n in range(10):
            journal.append(f"k{n}", answer(f"answer {n}"))
    journal.close()
    kept = read_journal(place, SAMPLE, EPOCH)
    assert 0 < len(kept) < 10
    assert place.path(SAMPLE, EPOCH).stat().st_size <= 2_000
    assert "no more calls journaled" in caplog.text


def test_an_answer_holding_a_secret_is_not_journaled(place):
    secret = "sk-ant-api03-" + "x" * 40
    written(place, [("k1", "one"), ("k2", f"the key is {secret}"), ("k3", "three")])
    text = place.path(SAMPLE, EPOCH).read_text()
    assert secret not in text
    assert [e.key for e in read_journal(place, SAMPLE, EPOCH)] == ["k1", "k3"]


def test_journals_of_logged_samples_are_removed(place):
    written(place, [("k1", "one")])
    other = Journal(place, 24, EPOCH)
    other.seed()
    other.append("k1", answer("one"))
    other.close()
    assert remove_journals(place, [(SAMPLE, EPOCH), (99, 1)]) == 1
    assert sorted(os.listdir(place.folder)) == ["24-1.jsonl"]
    remove_journals(place, [(24, EPOCH)])
    assert not place.folder.parent.exists()  # the journal folder goes once empty
    written(place, [("k1", "one")])
    remove_all_journals(place)
    assert not place.folder.parent.exists()


def test_an_id_that_is_no_safe_name_is_digested(place):
    assert place.path("../../etc/passwd", 1).parent == place.folder
    assert place.path("a b", 2).name.startswith("id-") and place.path(7, 2).name == "7-2.jsonl"


def test_half_an_emoji_is_journaled_escaped_as_every_reader_escapes_it(place):
    """No UTF-8 file holds a lone surrogate: the journal keeps it as ``\\ud83d`` (found in CI)."""
    torn = answer("J\ud83d Doe")
    written(place, [("k1", "one")])  # a journal with an answer before it
    journal = Journal(place, SAMPLE, EPOCH)
    journal.seed()
    journal.take("k1")
    journal.append("k2", torn)
    journal.close()
    assert torn.completion == "J\ud83d Doe"  # the caller's answer is left as it is
    again = Journal(place, SAMPLE, EPOCH)
    assert again.seed() == 2
    again.take("k1")
    replayed = again.take("k2")
    assert replayed is not None and replayed.completion == "J\\ud83d Doe"

"""Notes: add, bm25 order (checked against FTS5's own bm25), scoping, forget, limits."""

from __future__ import annotations

import sqlite3

import pytest

import memory.bounded as bounded_module
from memory.notes import MAX_NOTE_CHARS, Memory, NoteTooLarge
from memory.query import all_of, query_terms
from memory.schema import MIGRATIONS
from sqlitedb.database import Database
from tests.memory.corpus import CORPUS


def test_owner_ids_are_small_and_search_finds_the_note(memory: Memory) -> None:
    first = memory.add("owner", "Remember the milk")
    second = memory.add("owner", "Water the plants")
    assert (first, second) == (1, 2)
    [hit] = memory.search("owner", "milk")
    assert hit.id == 1
    assert hit.text == "Remember the milk"
    assert "[milk]" in hit.snippet
    assert hit.score > 0


def test_scores_and_order_match_fts5_bm25(memory: Memory, conn: sqlite3.Connection) -> None:
    memory.add_many("owner", CORPUS)
    for query in ["coffee", "dentist", "friday", "coffee ana", "lisbon trip", "the"]:
        hits = memory.search("owner", query, k=3)
        expression = all_of(query_terms(query))
        reference = conn.execute(
            "SELECT rowid, bm25(memory_notes_fts) FROM memory_notes_fts "
            "WHERE memory_notes_fts MATCH ? ORDER BY rank", (expression,)).fetchall()
        matched_all = hits[: len(reference)]  # any-word matches may follow the all-word ones
        assert [hit.id for hit in matched_all] == [row_id for row_id, _ in reference][:3], query
        for hit, (_, bm25) in zip(hits, reference, strict=False):
            assert hit.score == pytest.approx(-bm25, rel=1e-9, abs=1e-9), query


def test_all_words_before_any_word(memory: Memory) -> None:
    both = memory.add("owner", "lisbon hotel booked")
    memory.add_many("owner", ["hotel hotel hotel", "lisbon lisbon", "hotel"])
    hits = memory.search("owner", "lisbon hotel", k=4)
    assert hits[0].id == both
    assert len(hits) == 4  # the any-word matches fill up to k
    assert memory.search("owner", "lisbon hotel", k=1)[0].id == both


def test_case_and_diacritics_are_folded(memory: Memory) -> None:
    note = memory.add("owner", "Café Crème at the Zürich office")
    for query in ["cafe creme", "CAFÉ", "zurich", "ZÜRICH Office"]:
        assert [hit.id for hit in memory.search("owner", query)] == [note], query


def test_a_user_never_sees_another_scopes_notes(memory: Memory) -> None:
    mine = memory.add("owner", "secret project falcon")
    theirs = memory.add("telegram:42", "my project falcon notes")
    other = memory.add("discord:7", "falcon sightings")
    assert [h.id for h in memory.search("owner", "falcon")] == [mine]
    assert [h.id for h in memory.search("telegram:42", "falcon")] == [theirs]
    assert [h.id for h in memory.search("discord:7", "falcon project")] == [other]
    assert memory.search("telegram:4", "falcon") == []  # a prefix of a scope is no scope
    assert [h.id for h in memory.recent("telegram:42")] == [theirs]


def test_forget_only_in_its_own_scope(memory: Memory) -> None:
    note = memory.add("owner", "gate code 4321")
    stranger = memory.add("telegram:9", "hello")
    assert memory.forget("telegram:9", note) is False
    assert memory.forget("owner", stranger) is False
    assert [h.id for h in memory.search("owner", "gate code")] == [note]
    assert memory.forget("owner", note) is True
    assert memory.search("owner", "gate code") == []
    assert memory.recent("owner") == []
    assert memory.forget("owner", note) is False


def test_ids_are_not_reused_after_forget(memory: Memory) -> None:
    first = memory.add("owner", "one")
    memory.forget("owner", first)
    assert memory.add("owner", "two") == first + 1


def test_recent_newest_first(memory: Memory) -> None:
    ids = memory.add_many("owner", [f"note {n}" for n in range(5)])
    assert [h.id for h in memory.recent("owner", 3)] == ids[::-1][:3]


def test_a_note_too_large_is_refused_not_truncated(memory: Memory) -> None:
    with pytest.raises(NoteTooLarge, match=f"limit is {MAX_NOTE_CHARS:,}"):
        memory.add("owner", "word " * MAX_NOTE_CHARS)
    assert memory.recent("owner") == []
    with pytest.raises(ValueError, match="needs some text"):
        memory.add("owner", "   ")


def test_text_sqlite_cannot_store_is_cleaned(memory: Memory) -> None:
    note = memory.add("owner", "broken \ud800 surrogate and \x00 nul")
    [hit] = memory.search("owner", "surrogate")
    assert hit.id == note and "\x00" not in hit.text


def test_an_old_note_that_ranks_best_is_found(memory: Memory,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Notes are ranked exactly, however many newer notes hold the word."""
    monkeypatch.setattr(bounded_module, "CANDIDATES", 3)
    best_but_old = memory.add("owner", "tea")
    newer = memory.add_many("owner", [f"tea with biscuit number {n}" for n in range(5)])
    hits = memory.search("owner", "tea", k=5)
    assert [h.id for h in hits] == [best_but_old, *newer[::-1][:4]]


def test_only_the_newest_history_lines_are_ranked(memory: Memory,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The documented trade-off of chat history: a common word ranks only its newest
    CANDIDATES matches."""
    monkeypatch.setattr(bounded_module, "CANDIDATES", 3)
    memory.add_history("owner", "user", "tea")
    for n in range(5):
        memory.add_history("owner", "user", f"tea with biscuit number {n}")
    hits = memory.search_history("owner", "tea", k=5)
    assert [h.text for h in hits] == [f"tea with biscuit number {n}" for n in (4, 3, 2)]


def test_migrations_apply_once(db: Database) -> None:
    Memory(db).add("owner", "kept")
    assert db.migrate(MIGRATIONS) == []
    assert [h.text for h in Memory(db).recent("owner")] == ["kept"]


def test_optimize_keeps_every_note_searchable(memory: Memory) -> None:
    ids = memory.add_many("owner", CORPUS)
    memory.add_history("owner", "user", "coffee talk")
    before = [h.id for h in memory.search("owner", "coffee", k=10)]
    memory.optimize()
    assert [h.id for h in memory.search("owner", "coffee", k=10)] == before
    assert set(before) <= set(ids) and len(before) == 4
    assert memory.search_history("owner", "coffee")[0].text == "coffee talk"

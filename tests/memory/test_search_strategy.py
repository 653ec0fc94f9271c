"""The bounded search strategy: cached match counts, common words kept out of FTS5's AND,
notes with two words found in the any-word pass. Each result is checked against FTS5."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

import memory.bounded as bounded_module
from memory.notes import Memory
from memory.query import all_of, query_terms
from sqlitedb.database import Database
from tests.memory.corpus import CORPUS


def fts5_all_words(conn: sqlite3.Connection, query: str) -> list[tuple[int, float]]:
    """FTS5's own ranking of the notes holding every word: (id, -bm25), best first."""
    return [(row_id, -bm25) for row_id, bm25 in conn.execute(
        "SELECT rowid, bm25(memory_notes_fts) FROM memory_notes_fts "
        "WHERE memory_notes_fts MATCH ? ORDER BY rank", (all_of(query_terms(query)),))]


@pytest.mark.parametrize("query", ["coffee ana", "the coffee", "lisbon trip the", "on the"])
def test_common_words_checked_outside_fts5_give_fts5s_answer(
        memory: Memory, conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch,
        query: str) -> None:
    """Forcing every word but the rarest out of FTS5's AND changes nothing in the result."""
    memory.add_many("owner", CORPUS)
    monkeypatch.setattr(bounded_module, "WALK", 0)
    monkeypatch.setattr(bounded_module, "DENSE", 0.0)
    reference = fts5_all_words(conn, query)
    hits = memory.search("owner", query, k=len(reference))
    assert [hit.id for hit in hits] == [row_id for row_id, _ in reference]
    for hit, (_, score) in zip(hits, reference, strict=True):
        assert hit.score == pytest.approx(score, rel=1e-9)


def test_match_counts_are_recounted_after_add_and_forget(memory: Memory,
                                                         conn: sqlite3.Connection) -> None:
    memory.add_many("owner", CORPUS)
    before = memory.search("owner", "coffee")[0].score  # fills the cache
    extra = memory.add_many("owner", ["coffee again", "more coffee"])
    after_add = {hit.id: hit.score for hit in memory.search("owner", "coffee", k=10)}
    assert dict(fts5_all_words(conn, "coffee")) == pytest.approx(after_add, rel=1e-9)
    assert max(after_add.values()) != before
    memory.forget("owner", extra[0])
    after_forget = {hit.id: hit.score for hit in memory.search("owner", "coffee", k=10)}
    assert dict(fts5_all_words(conn, "coffee")) == pytest.approx(after_forget, rel=1e-9)


def test_another_connections_notes_are_counted(memory: Memory, conn: sqlite3.Connection,
                                               tmp_path: Path) -> None:
    memory.add_many("owner", CORPUS)
    memory.search("owner", "lisbon")  # fills the cache
    other = Database(tmp_path / "frontdesk.db")  # as another process would
    try:
        Memory(other).add_many("owner", ["lisbon lisbon", "lisbon again"])
    finally:
        other.close()
    scores = {hit.id: hit.score for hit in memory.search("owner", "lisbon", k=10)}
    assert dict(fts5_all_words(conn, "lisbon")) == pytest.approx(scores, rel=1e-9)


def test_any_word_pass_finds_an_older_note_with_two_of_the_words(
        memory: Memory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each word's newest matches miss the old note; the pair of rarer words finds it."""
    both = memory.add("owner", "alpha beta")
    memory.add_many("owner", [f"alpha note {n}" for n in range(3)] +
                    [f"beta note {n}" for n in range(3)])
    monkeypatch.setattr(bounded_module, "CANDIDATES", 3)
    monkeypatch.setattr(bounded_module, "COMMON", 1.0)  # every word counts as rare here
    hits = memory.search("owner", "alpha beta gamma", k=3)
    assert hits[0].id == both

"""The pruned search (memory/topk.py) returns FTS5's exact BM25 top k on any small corpus:
the same ids, in the same order, with the same scores to the last bit, whichever way it
settles a note (probing buckets or reading texts), and it proves it (no work limit hit)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memory.topk as topk_module
from memory.notes import Memory
from memory.query import any_of, query_terms
from memory.schema import MIGRATIONS
from sqlitedb.database import Database

# a few common words and a tail of rare ones, so notes share words and scores tie often
VOCABULARY = ["the", "cafe", "milk", "dentist", "lisbon", "report", "ana", "boiler",
              "passport", "tuesday", "crown", "hotel"]
word = st.sampled_from(VOCABULARY) | st.sampled_from(VOCABULARY[:3])
note = st.lists(word, min_size=1, max_size=14).map(" ".join)
query = st.lists(word | st.just("absent"), min_size=1, max_size=4).map(" ".join)


@contextmanager
def filled(notes: list[str], others: list[str]) -> Iterator[tuple[Memory, sqlite3.Connection]]:
    """A fresh database with ``notes`` for the owner (in two imports) and ``others`` for
    another person, interleaved with the owner's last ones."""
    db = Database(":memory:", migrations=MIGRATIONS)
    conn = db.writer
    try:
        memory = Memory(db)
        half = len(notes) // 2
        memory.add_many("owner", notes[:half])
        for i, text in enumerate(notes[half:]):
            memory.add("owner", text)
            if i < len(others):
                memory.add("telegram:1", others[i])
        yield memory, conn
    finally:
        conn.close()


def fts5_top(conn: sqlite3.Connection, text: str, k: int) -> list[tuple[int, float]]:
    """FTS5's own ranking of the owner's notes: (id, -bm25), ties newest first."""
    return [(row_id, -bm25) for row_id, bm25 in conn.execute(
        "SELECT rowid, bm25(memory_notes_fts) FROM memory_notes_fts WHERE memory_notes_fts "
        "MATCH ? AND rowid < 1000000000 ORDER BY bm25(memory_notes_fts), rowid DESC LIMIT ?",
        (any_of(query_terms(text)), k))]


@pytest.mark.parametrize("text_cost", [0, 130, 10**9], ids=["texts", "mixed", "probes"])
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@given(notes=st.lists(note, min_size=1, max_size=60), others=st.lists(note, max_size=5),
       queries=st.lists(query, min_size=1, max_size=4), k=st.sampled_from([1, 3, 5]))
def test_pruned_top_k_is_fts5s_exact_top_k(monkeypatch: pytest.MonkeyPatch, text_cost: int,
                                           notes: list[str], others: list[str],
                                           queries: list[str], k: int) -> None:
    monkeypatch.setattr(topk_module, "TEXT_COST", text_cost)
    with filled(notes, others) as (memory, conn):
        for text in queries:
            got = [(hit.id, hit.score) for hit in memory.search("owner", text, k)]
            assert got == fts5_top(conn, text, k), text
        assert memory.inexact == 0


def test_a_thousand_tied_notes_give_the_newest_and_stay_exact() -> None:
    """Many notes with the very same score: the newest win, as FTS5 orders them."""
    notes = ["dentist on tuesday"] * 1000 + ["the dentist"] * 300 + ["dentist"] * 3
    with filled(notes, []) as (memory, conn):
        for text in ["dentist", "tuesday dentist", "the dentist tuesday"]:
            got = [(hit.id, hit.score) for hit in memory.search("owner", text, 5)]
            assert got == fts5_top(conn, text, 5)
        assert memory.inexact == 0

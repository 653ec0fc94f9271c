"""Search ranks notes exactly as FTS5's bm25() does: the same ids, in the same order, with
the same scores to the last bit, in every scope, after adds, deletes, re-saved notes, an
import, and on a database made before the impact index existed."""

from __future__ import annotations

import io
import json
import random
import sqlite3
from pathlib import Path

import pytest

import memory.topk as topk_module
from memory.notes import Memory
from memory.query import any_of, query_terms
from memory.schema import MIGRATIONS
from memory.scopes import STRIDE
from memory.transfer import import_notes
from sqlitedb import connect, migrate
from sqlitedb.database import Database

WORDS = [f"w{i}" for i in range(80)]
WEIGHTS = [1 / rank for rank in range(1, len(WORDS) + 1)]  # Zipf: a few words in most notes
PEOPLE = ["owner", "telegram:1", "telegram:2"]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(1, 10)))


def fts5_top(conn: sqlite3.Connection, number: int, query: str, k: int) -> list[tuple[int, float]]:
    """FTS5's exact ranking of one scope's notes: (id, -bm25), ties newest first."""
    return [(row_id, -bm25) for row_id, bm25 in conn.execute(
        "SELECT rowid, bm25(memory_notes_fts) FROM memory_notes_fts WHERE memory_notes_fts "
        "MATCH ? AND rowid BETWEEN ? AND ? ORDER BY bm25(memory_notes_fts), rowid DESC LIMIT ?",
        (any_of(query_terms(query)), number * STRIDE, number * STRIDE + STRIDE - 1, k))]


def assert_exact(memory: Memory, conn: sqlite3.Connection, rng: random.Random,
                 queries: int = 120) -> None:
    """Random 1-4 word queries in every scope give FTS5's answer, ids and scores."""
    numbers = dict(conn.execute("SELECT scope, number FROM memory_scopes"))
    for _ in range(queries):
        words = rng.choices(WORDS, weights=WEIGHTS, k=rng.randint(1, 4))
        query = " ".join(word.upper() if rng.random() < 0.1 else word for word in words)
        scope = rng.choice(PEOPLE)
        k = rng.choice([1, 5, 5, 20])
        got = [(hit.id, hit.score) for hit in memory.search(scope, query, k)]
        expected = fts5_top(conn, numbers[scope], query, k) if scope in numbers else []
        assert got == expected, (scope, query, k)


def assert_counts_match_fts5(conn: sqlite3.Connection) -> None:
    """The index counts, per word, the notes FTS5 counts (what its IDF uses)."""
    conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab "
                 "USING fts5vocab(main, memory_notes_fts, row)")
    assert dict(conn.execute("SELECT term, doc FROM temp.vocab")) == dict(
        conn.execute("SELECT word, notes FROM memory_note_words"))
    notes = conn.execute("SELECT COUNT(*) FROM memory_notes").fetchone()[0]
    assert conn.execute("SELECT notes FROM memory_note_index").fetchone()[0] == notes
    buckets = conn.execute("SELECT word, SUM(notes) FROM memory_note_buckets "
                           "GROUP BY word").fetchall()
    assert dict(buckets) == dict(conn.execute("SELECT word, notes FROM memory_note_words"))


def fill(memory: Memory, rng: random.Random, notes: int) -> None:
    """Notes in three scopes, bulk and one at a time, interleaved."""
    memory.add_many("owner", [sentence(rng) for _ in range(notes)])
    for i in range(notes // 5):
        memory.add(PEOPLE[i % 3], sentence(rng))


def test_search_gives_fts5s_exact_ranking_in_every_scope(memory: Memory,
                                                         conn: sqlite3.Connection) -> None:
    rng = random.Random(5)
    fill(memory, rng, 1500)
    assert_counts_match_fts5(conn)
    assert_exact(memory, conn, rng)


def test_a_word_repeated_in_the_query_counts_twice_as_in_fts5(memory: Memory,
                                                               conn: sqlite3.Connection) -> None:
    memory.add_many("owner", ["café au lait", "cafe cafe", "the cafe is open", "tea"])
    for query in ["café CAFE", "cafe café tea", "Café"]:
        assert [(hit.id, hit.score) for hit in memory.search("owner", query, 10)] == \
            fts5_top(conn, 0, query, 10)


def test_deleted_and_resaved_notes_keep_the_ranking_exact(memory: Memory,
                                                          conn: sqlite3.Connection) -> None:
    rng = random.Random(6)
    fill(memory, rng, 1200)
    ids = [row[0] for row in conn.execute("SELECT id FROM memory_notes WHERE scope = 'owner'")]
    for note_id in rng.sample(ids, 300):
        assert memory.forget("owner", note_id)
    # a note is changed by saving it again (notes are never edited in place)
    for note_id in rng.sample([i for i in ids if conn.execute(
            "SELECT 1 FROM memory_notes WHERE id = ?", (i,)).fetchone()], 100):
        text = conn.execute("SELECT text FROM memory_notes WHERE id = ?",
                            (note_id,)).fetchone()[0]
        memory.forget("owner", note_id)
        memory.add("owner", text + " " + rng.choice(WORDS[:5]), effect_key=f"edit-{note_id}")
    assert not memory.forget("telegram:1", ids[-1])  # not theirs: nothing changes
    assert_counts_match_fts5(conn)
    assert_exact(memory, conn, rng)


def test_imported_notes_are_ranked_exactly(memory: Memory, conn: sqlite3.Connection) -> None:
    rng = random.Random(7)
    fill(memory, rng, 300)
    lines = [json.dumps({"format": "frontdesk-notes", "version": 1, "exported_at": 1.0,
                         "notes": 400})]
    lines += [json.dumps({"id": 5_000 + i, "scope": rng.choice(PEOPLE), "text": sentence(rng),
                          "created_at": float(i)}) for i in range(400)]
    import_notes(conn, io.BytesIO("\n".join(lines).encode()))
    assert_counts_match_fts5(conn)
    assert_exact(memory, conn, rng)


def test_a_database_from_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    rng = random.Random(8)
    path = tmp_path / "frontdesk.db"
    old = connect(path)
    migrate(old, [step for step in MIGRATIONS if step[0] < "memory_005"])
    old.executemany("INSERT INTO memory_notes (id, scope, text, created_at) VALUES (?, ?, ?, 0)",
                    [(i, "owner", sentence(rng)) for i in range(1, 801)] +
                    [(STRIDE + i, "telegram:1", sentence(rng)) for i in range(1, 201)])
    old.execute("INSERT INTO memory_scopes (scope, number, last_note) "
                "VALUES ('telegram:1', 1, 200)")
    old.execute("UPDATE memory_scopes SET last_note = 800 WHERE scope = 'owner'")
    old.close()
    db = Database(path, migrations=MIGRATIONS)
    conn = db.writer
    memory = Memory(db)
    assert conn.execute("SELECT 1 FROM migrations WHERE name = 'memory_005_impact'").fetchone()
    assert_counts_match_fts5(conn)
    assert_exact(memory, conn, rng)


def test_a_note_written_around_memory_falls_back_to_the_bounded_search(
        memory: Memory, conn: sqlite3.Connection) -> None:
    memory.add_many("owner", ["the boiler service", "boiler pressure low"])
    conn.execute("INSERT INTO memory_notes (id, scope, text, created_at) "
                 "VALUES (3, 'owner', 'boiler boiler boiler', 0)")
    hits = memory.search("owner", "boiler", 5)
    assert sorted(hit.id for hit in hits) == [1, 2, 3]


def test_past_the_work_limit_the_answer_is_still_the_scopes_best_known_notes(
        memory: Memory, conn: sqlite3.Connection, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    fill(memory, rng, 1500)
    monkeypatch.setattr(topk_module, "MAX_WORK", 0)
    exact = fts5_top(conn, 0, "w0 w1 w2", 5)
    hits = memory.search("owner", "w0 w1 w2", 5)
    assert len(hits) == 5 and all(hit.id < STRIDE for hit in hits)
    scores = dict(fts5_top(conn, 0, "w0 w1 w2", 10_000))
    assert all(hit.score <= scores[hit.id] * (1 + 1e-9) for hit in hits)
    assert sum(scores[hit.id] for hit in hits) >= 0.5 * sum(score for _, score in exact)

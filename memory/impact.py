"""The notes' impact index: the exact BM25 top k of a scope without ranking every match.

FTS5 keeps each word's matches in rowid order only, so its own ``ORDER BY rank`` scores every
note a word is in (seconds for a word in half of a million notes). This index keeps, per
scope and word, the notes holding it grouped by *bucket* — how many times the word occurs
in the note (tf) and the note's length in tokens — with each bucket's size. BM25's weight
of one word in one note depends on nothing else (and on the collection's average length,
the same for every note), so a search reads a word's buckets best first and stops as soon
as no note it has not read can reach the k-th best score (memory/topk.py), which for the
bench's queries is well under a few thousand notes even at a million.

Hand-written because neither FTS5 nor a maintained library keeps postings ordered by
impact inside SQLite. It is kept in step by the code that writes notes (memory/notes.py,
memory/transfer.py) in the same transaction, with FTS5's own token count per note as the
length and the tokenizer of memory/rank.py (which mirrors ``unicode61
remove_diacritics 2``) for the words. ``memory_note_index.notes`` counts the notes indexed:
a search compares it with FTS5's row count and, should they differ (a note written around
this code), falls back to the bounded search of memory/notes.py.
"""

from __future__ import annotations

import gc
import sqlite3
import sys
from array import array
from collections import Counter
from collections.abc import Iterable

from memory.rank import read_varint, tokens
from memory.scopes import STRIDE

SCHEMA = """
    CREATE TABLE memory_note_postings (
        scope INTEGER NOT NULL,
        word TEXT NOT NULL,
        tf INTEGER NOT NULL,
        length INTEGER NOT NULL,
        chunk INTEGER NOT NULL,
        ids BLOB NOT NULL,
        PRIMARY KEY (scope, word, tf, length, chunk)
    ) WITHOUT ROWID;
    CREATE TABLE memory_note_buckets (
        scope INTEGER NOT NULL,
        word TEXT NOT NULL,
        tf INTEGER NOT NULL,
        length INTEGER NOT NULL,
        notes INTEGER NOT NULL,
        PRIMARY KEY (scope, word, tf, length)
    ) WITHOUT ROWID;
    CREATE TABLE memory_note_words (
        word TEXT PRIMARY KEY,
        notes INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE memory_note_index (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        notes INTEGER NOT NULL
    );
    INSERT INTO memory_note_index (id, notes) VALUES (1, 0);
"""
CHUNK = 192  # note ids per row of a bucket: 768 bytes, small enough to stay on its page


def create(conn: sqlite3.Connection) -> None:
    """The migration: the index's tables, then every note already saved indexed (inside the
    migration's transaction). The postings are gathered in memory first (4 bytes a posting,
    about 30 MB at a million notes) and written once, in key order: a minute at a million
    notes where adding them a batch at a time would rewrite the same pages again and
    again."""
    for statement in SCHEMA.split(";"):
        if statement.strip():
            conn.execute(statement)
    buckets: dict[tuple[int, str, int, int], array[int]] = {}
    words: Counter[str] = Counter()
    notes = 0
    enabled = gc.isenabled()
    gc.disable()  # no cycles among these objects to find
    try:
        rows = conn.execute("SELECT n.id, n.text, d.sz FROM memory_notes n "
                            "JOIN memory_notes_fts_docsize d ON d.id = n.id ORDER BY n.id")
        for note_id, text, size in rows:
            scope = note_id // STRIDE
            offset = note_id % STRIDE
            length = read_varint(size, 0)[0]
            for word, tf in Counter(tokens(text)).items():
                words[word] += 1
                key = (scope, word, tf, length)
                held = buckets.get(key)
                if held is None:
                    held = buckets[key] = array("I")
                held.append(offset)
            notes += 1
    finally:
        if enabled:
            gc.enable()
    for key in sorted(buckets):
        held = buckets[key]
        conn.executemany(
            "INSERT INTO memory_note_postings (scope, word, tf, length, chunk, ids) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            [(*key, i, encode(held[start:start + CHUNK]))
             for i, start in enumerate(range(0, len(held), CHUNK))])
    conn.executemany("INSERT INTO memory_note_buckets (scope, word, tf, length, notes) "
                     "VALUES (?, ?, ?, ?, ?)",
                     [(*key, len(buckets[key])) for key in sorted(buckets)])
    conn.executemany("INSERT INTO memory_note_words (word, notes) VALUES (?, ?)",
                     sorted(words.items()))
    conn.execute("UPDATE memory_note_index SET notes = ? WHERE id = 1", (notes,))


def index_notes(conn: sqlite3.Connection, notes: Iterable[tuple[int, str]]) -> None:
    """Inside the transaction that saved them: index these notes (id, text)."""
    _change(conn, list(notes), +1)


def unindex_note(conn: sqlite3.Connection, note_id: int) -> None:
    """Inside a transaction, before the note is deleted: take it out of the index."""
    row = conn.execute("SELECT text FROM memory_notes WHERE id = ?", (note_id,)).fetchone()
    if row is not None:
        _change(conn, [(note_id, str(row[0]))], -1)


def encode(offsets: Iterable[int]) -> bytes:
    """Note ids (as offsets in their scope's range, < 2**32) as a little-endian blob."""
    packed = array("I", offsets)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed.tobytes()


def decode(blob: bytes) -> array[int]:
    """The offsets of one blob."""
    packed = array("I")
    packed.frombytes(blob)
    if sys.byteorder == "big":
        packed.byteswap()
    return packed


def bucket(conn: sqlite3.Connection, scope: int, word: str, tf: int, length: int) -> array[int]:
    """The offsets of the notes of ``scope`` ``length`` tokens long holding ``word`` ``tf``
    times."""
    held = array("I")
    for (blob,) in conn.execute("SELECT ids FROM memory_note_postings WHERE scope = ? AND "
                                "word = ? AND tf = ? AND length = ?", (scope, word, tf, length)):
        held.frombytes(blob)
    if sys.byteorder == "big":
        held.byteswap()
    return held


def word_counts(conn: sqlite3.Connection, base: int, offsets: list[int],
                words: list[str]) -> dict[int, list[int]]:
    """How many times each of ``words`` occurs in each note (by offset from ``base``), from
    the notes' texts."""
    counts: dict[int, list[int]] = {}
    for offset, text in conn.execute(
            f"SELECT id - ?, text FROM memory_notes WHERE id IN ({','.join('?' * len(offsets))})",
            (base, *(base + offset for offset in offsets))):
        found = tokens(text)
        counts[offset] = [found.count(word) for word in words]
    return counts


def _change(conn: sqlite3.Connection, notes: list[tuple[int, str]], sign: int) -> None:
    """Add (+1) or remove (-1) the postings of ``notes``, with their counts."""
    if not notes:
        return
    lengths = _lengths(conn, [note_id for note_id, _ in notes])
    words: Counter[str] = Counter()
    buckets: dict[tuple[int, str, int, int], list[int]] = {}
    enabled = gc.isenabled()
    gc.disable()  # millions of small tuples for a big import: no cycles among them to find
    try:
        for note_id, text in notes:
            scope = note_id // STRIDE
            offset = note_id % STRIDE
            length = lengths.get(note_id, 0)
            for word, tf in Counter(tokens(text)).items():
                words[word] += 1
                buckets.setdefault((scope, word, tf, length), []).append(offset)
    finally:
        if enabled:
            gc.enable()
    for key in sorted(buckets):  # in key order: each B-tree page is visited once
        (_add if sign > 0 else _remove)(conn, key, buckets[key])
    conn.executemany("INSERT INTO memory_note_words (word, notes) VALUES (?, ?) "
                     "ON CONFLICT (word) DO UPDATE SET notes = notes + excluded.notes",
                     sorted((word, sign * count) for word, count in words.items()))
    conn.executemany("INSERT INTO memory_note_buckets (scope, word, tf, length, notes) "
                     "VALUES (?, ?, ?, ?, ?) ON CONFLICT (scope, word, tf, length) "
                     "DO UPDATE SET notes = notes + excluded.notes",
                     sorted((*key, sign * len(ids)) for key, ids in buckets.items()))
    if sign < 0:
        conn.executemany("DELETE FROM memory_note_words WHERE word = ? AND notes <= 0",
                         [(word,) for word in words])
        conn.executemany("DELETE FROM memory_note_buckets WHERE scope = ? AND word = ? "
                         "AND tf = ? AND length = ? AND notes <= 0", list(buckets))
    conn.execute("UPDATE memory_note_index SET notes = notes + ? WHERE id = 1",
                 (sign * len(notes),))


_BUCKET = "scope = ? AND word = ? AND tf = ? AND length = ?"


def _add(conn: sqlite3.Connection, key: tuple[int, str, int, int], offsets: list[int]) -> None:
    """Append note offsets to a bucket: its last row filled up, then new rows."""
    last = conn.execute(f"SELECT chunk, ids FROM memory_note_postings WHERE {_BUCKET} "
                        "ORDER BY chunk DESC LIMIT 1", key).fetchone()
    chunk = 0
    if last is not None:
        chunk, held = int(last[0]), decode(last[1])
        room = CHUNK - len(held)
        if room > 0:
            held.extend(offsets[:room])
            conn.execute(f"UPDATE memory_note_postings SET ids = ? WHERE {_BUCKET} "
                         "AND chunk = ?", (encode(held), *key, chunk))
            offsets = offsets[room:]
        chunk += 1
    conn.executemany("INSERT INTO memory_note_postings (scope, word, tf, length, chunk, ids) "
                     "VALUES (?, ?, ?, ?, ?, ?)",
                     [(*key, chunk + i, encode(offsets[start:start + CHUNK]))
                      for i, start in enumerate(range(0, len(offsets), CHUNK))])


def _remove(conn: sqlite3.Connection, key: tuple[int, str, int, int],
            offsets: list[int]) -> None:
    """Take note offsets out of a bucket (a row left empty is deleted)."""
    gone = set(offsets)
    for chunk, blob in conn.execute(f"SELECT chunk, ids FROM memory_note_postings "
                                    f"WHERE {_BUCKET}", key).fetchall():
        held = decode(blob)
        kept = [offset for offset in held if offset not in gone]
        if len(kept) == len(held):
            continue
        if kept:
            conn.execute(f"UPDATE memory_note_postings SET ids = ? WHERE {_BUCKET} "
                         "AND chunk = ?", (encode(kept), *key, chunk))
        else:
            conn.execute(f"DELETE FROM memory_note_postings WHERE {_BUCKET} AND chunk = ?",
                         (*key, chunk))


def _lengths(conn: sqlite3.Connection, ids: list[int]) -> dict[int, int]:
    """FTS5's own token count of each note (what its bm25() divides by)."""
    found: dict[int, int] = {}
    low, high = min(ids), max(ids)
    if high - low < 4 * len(ids):  # a run of fresh ids: one range read
        rows = conn.execute("SELECT id, sz FROM memory_notes_fts_docsize "
                            "WHERE id BETWEEN ? AND ?", (low, high)).fetchall()
    else:
        rows = [row for start in range(0, len(ids), 500) for row in conn.execute(
            "SELECT id, sz FROM memory_notes_fts_docsize WHERE id IN "
            f"({','.join('?' * len(ids[start:start + 500]))})", ids[start:start + 500])]
    for note_id, size in rows:
        found[int(note_id)] = read_varint(size, 0)[0]
    return found


def collection(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """FTS5's row count and token count of the notes (its bm25()'s N and average length),
    or None when the index has not counted the same notes as FTS5."""
    record = conn.execute("SELECT block FROM memory_notes_fts_data WHERE id = 1").fetchone()
    indexed = conn.execute("SELECT notes FROM memory_note_index WHERE id = 1").fetchone()
    rows, total = 0, 0
    if record is not None and record[0]:
        rows, offset = read_varint(record[0], 0)
        total, _ = read_varint(record[0], offset)
    if indexed is None or indexed[0] != rows:
        return None
    return rows, total

"""Notes and chat history in SQLite FTS5: add, bm25 search with snippets, forget, recent.

Scoping lives in the row ids. Every scope (the owner, a person, a chat) gets a number, and
its rows take ids in ``[number * STRIDE, (number + 1) * STRIDE)``; the owner is number 0,
so the owner's note ids are simply 1, 2, 3… A search hands FTS5 that rowid range, so another
scope's rows are never even read, and the final rows are joined back to their table and
checked against the scope once more.

Search is bounded so it stays fast at a million notes: ranking every row a common word
matches costs ~100 ms, so only a word's newest CANDIDATES matches are ranked (FTS5 walks
rowids newest first and stops there; rarer words rank every match), with BM25 computed in
memory/rank.py. Several words: notes with all of them are looked for among the rarest
word's newest matches; notes with any of them (each word bringing its own newest matches)
only fill up to k. README.md ("How search stays fast at a million notes") has the trade-off.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memory.db import Migration, migrate
from memory.query import clean_text, query_terms
from memory.rank import Scorer, average_length, idf, phrase_tokens, read_varint, snippet

STRIDE = 1_000_000_000
MAX_NOTE_CHARS = 10_000
CANDIDATES = 500
SAMPLE = 500

MIGRATIONS: list[Migration] = [
    ("memory_001_scopes", """
        CREATE TABLE memory_scopes (
            scope TEXT PRIMARY KEY,
            number INTEGER NOT NULL UNIQUE,
            last_note INTEGER NOT NULL DEFAULT 0,
            last_history INTEGER NOT NULL DEFAULT 0
        );
        INSERT INTO memory_scopes (scope, number) VALUES ('owner', 0);
    """),
    ("memory_002_notes", """
        CREATE TABLE memory_notes (
            id INTEGER PRIMARY KEY,
            scope TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE VIRTUAL TABLE memory_notes_fts USING fts5(
            text, content='memory_notes', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memory_notes_ai AFTER INSERT ON memory_notes BEGIN
            INSERT INTO memory_notes_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memory_notes_ad AFTER DELETE ON memory_notes BEGIN
            INSERT INTO memory_notes_fts (memory_notes_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
        END;
    """),
    ("memory_003_history", """
        CREATE TABLE memory_history (
            id INTEGER PRIMARY KEY,
            chat TEXT NOT NULL,
            role TEXT NOT NULL,
            text TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE VIRTUAL TABLE memory_history_fts USING fts5(
            text, content='memory_history', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memory_history_ai AFTER INSERT ON memory_history BEGIN
            INSERT INTO memory_history_fts (rowid, text) VALUES (new.id, new.text);
        END;
        CREATE TRIGGER memory_history_ad AFTER DELETE ON memory_history BEGIN
            INSERT INTO memory_history_fts (memory_history_fts, rowid, text)
                VALUES ('delete', old.id, old.text);
        END;
    """),
]


class NoteTooLarge(ValueError):
    """A note over MAX_NOTE_CHARS; refused rather than silently cut."""


@dataclass(frozen=True)
class Hit:
    """One note or history line; ``score`` is -bm25 (higher is better, 0 when not ranked)."""

    id: int
    text: str
    snippet: str
    score: float
    created_at: float


@dataclass(frozen=True)
class _Table:
    """The names one searchable table goes by: rows, index, owner column, id sequence."""

    rows: str
    fts: str
    owner_column: str
    sequence: str


NOTES = _Table("memory_notes", "memory_notes_fts", "scope", "last_note")
HISTORY = _Table("memory_history", "memory_history_fts", "chat", "last_history")


class Memory:
    """The notes and chat history of every scope, over one SQLite connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self._lock = threading.Lock()  # one transaction at a time on this connection
        migrate(conn, MIGRATIONS)

    # -- notes ---------------------------------------------------------------------------

    def add(self, scope: str, text: str) -> int:
        """Save a note for ``scope``; return its id. NoteTooLarge if over the limit."""
        return self.add_many(scope, [text])[0]

    def add_many(self, scope: str, texts: Iterable[str]) -> list[int]:
        """Save several notes in one transaction (bulk import); return their ids."""
        cleaned = [_checked_note(text) for text in texts]
        now = time.time()
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                first = self._reserve(NOTES, scope, len(cleaned))
                ids = list(range(first, first + len(cleaned)))
                self.conn.executemany(
                    "INSERT INTO memory_notes (id, scope, text, created_at) VALUES (?, ?, ?, ?)",
                    [(note_id, scope, text, now) for note_id, text in zip(ids, cleaned,
                                                                           strict=True)])
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        return ids

    def search(self, scope: str, query: str, k: int = 5) -> list[Hit]:
        """The best ``k`` notes of ``scope`` for ``query`` by bm25, with snippets."""
        return self._search(NOTES, scope, query, k)

    def forget(self, scope: str, note_id: int) -> bool:
        """Delete one of ``scope``'s notes; False if it does not exist or is not theirs."""
        with self._lock:
            cursor = self.conn.execute("DELETE FROM memory_notes WHERE id = ? AND scope = ?",
                                       (note_id, scope))
        return cursor.rowcount > 0

    def recent(self, scope: str, n: int = 10) -> list[Hit]:
        """``scope``'s latest notes, newest first."""
        bounds = self._range(scope)
        if bounds is None:
            return []
        rows = self.conn.execute(
            "SELECT id, text, created_at FROM memory_notes WHERE id BETWEEN ? AND ? "
            "AND scope = ? ORDER BY id DESC LIMIT ?", (*bounds, scope, n)).fetchall()
        return [Hit(id=i, text=t, snippet=_shorten(t), score=0.0, created_at=c)
                for i, t, c in rows]

    def optimize(self) -> None:
        """Merge each FTS5 index into one segment (seconds at 1M notes; run it when idle).

        Notes arrive one transaction at a time and each leaves a small index segment; FTS5
        merges them incrementally, but a search still visits several. Merging them all cuts
        the slowest searches about in half at a million notes.
        """
        with self._lock:
            for table in (NOTES, HISTORY):
                self.conn.execute(f"INSERT INTO {table.fts} ({table.fts}) VALUES ('optimize')")

    # -- chat history --------------------------------------------------------------------

    def add_history(self, chat: str, role: str, text: str) -> None:
        """Append one line of a chat's history."""
        with self._lock:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                line_id = self._reserve(HISTORY, chat, 1)
                self.conn.execute(
                    "INSERT INTO memory_history (id, chat, role, text, created_at) "
                    "VALUES (?, ?, ?, ?, ?)", (line_id, chat, role, clean_text(text), time.time()))
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def history(self, chat: str, n: int = 20) -> list[tuple[str, str]]:
        """The chat's last ``n`` lines as (role, text), oldest first."""
        bounds = self._range(chat)
        if bounds is None:
            return []
        rows = self.conn.execute(
            "SELECT role, text FROM (SELECT id, role, text FROM memory_history "
            "WHERE id BETWEEN ? AND ? AND chat = ? ORDER BY id DESC LIMIT ?) ORDER BY id",
            (*bounds, chat, n)).fetchall()
        return [(role, text) for role, text in rows]

    def search_history(self, chat: str, query: str, k: int = 5) -> list[Hit]:
        """The best ``k`` lines of one chat's history for ``query``."""
        return self._search(HISTORY, chat, query, k)

    # -- internals -----------------------------------------------------------------------

    def _reserve(self, table: _Table, scope: str, count: int) -> int:
        """Inside a transaction: the first of ``count`` fresh ids in ``scope``'s range."""
        self.conn.execute(
            "INSERT OR IGNORE INTO memory_scopes (scope, number) "
            "VALUES (?, (SELECT MAX(number) + 1 FROM memory_scopes))", (scope,))
        number, last = self.conn.execute(
            f"UPDATE memory_scopes SET {table.sequence} = {table.sequence} + ? "
            f"WHERE scope = ? RETURNING number, {table.sequence}", (count, scope)).fetchone()
        if last >= STRIDE:
            raise OverflowError(f"scope {scope!r} is full ({STRIDE - 1:,} rows)")
        return int(number) * STRIDE + int(last) - count + 1

    def _range(self, scope: str) -> tuple[int, int] | None:
        """The id range that belongs to ``scope``; None if it has never written anything."""
        row = self.conn.execute("SELECT number FROM memory_scopes WHERE scope = ?",
                                (scope,)).fetchone()
        if row is None:
            return None
        return row[0] * STRIDE, row[0] * STRIDE + STRIDE - 1

    def _search(self, table: _Table, scope: str, query: str, k: int) -> list[Hit]:
        """Notes with all the words first; notes with any of them only to fill up to ``k``."""
        terms = query_terms(query)
        row = self.conn.execute(f"SELECT number, {table.sequence} FROM memory_scopes "
                                "WHERE scope = ?", (scope,)).fetchone()
        if not terms or row is None or k <= 0:
            return []
        low = row[0] * STRIDE
        span = _Span(low=low, high=low + STRIDE - 1, issued=row[1])
        idfs: dict[str, float] = {}
        fetched: dict[str, list[Any]] = {}
        with self._lock:  # one consistent snapshot for the few queries below
            self.conn.execute("BEGIN")
            try:
                if len(terms) == 1:
                    hits = self._ranked(table, scope, terms, terms, span, k, idfs, fetched)
                else:
                    # notes with all the words are found among the newest matches of the
                    # rarest one: FTS5's own AND walks every common word's whole list
                    for term in terms:
                        self._sample(table, term, span, idfs)
                    rarest = max(terms, key=lambda term: idfs[term])
                    hits = self._ranked(table, scope, terms, [rarest], span, k, idfs,
                                        fetched, require_all=True)
                if len(hits) < k and len(terms) > 1:
                    seen = {hit.id for hit in hits}
                    # each word brings its own newest matches, so a rare word is not crowded
                    # out of the candidates by a common one
                    more = self._ranked(table, scope, terms, terms, span, k + len(hits), idfs,
                                        fetched)
                    hits += [hit for hit in more if hit.id not in seen][: k - len(hits)]
            finally:
                self.conn.execute("COMMIT")
        return hits

    def _ranked(self, table: _Table, scope: str, terms: list[str], expressions: list[str],
                span: _Span, k: int, idfs: dict[str, float],
                fetched: dict[str, list[Any]], require_all: bool = False) -> list[Hit]:
        """Top ``k`` by BM25 among the newest CANDIDATES notes matching the expressions
        (and holding every phrase of ``terms`` if ``require_all``)."""
        per_expression = max(CANDIDATES // len(expressions), 1)
        candidates: dict[int, tuple[int, str, float, bytes]] = {}
        phrases = [phrase_tokens(term) for term in terms]
        # which phrases each candidate surely holds lets the scorer skip most token scans
        present: dict[int, set[tuple[str, ...]]] = {}
        for expression in expressions:
            holds = {phrase_tokens(expression)}
            if expression not in fetched or len(fetched[expression]) < per_expression:
                fetched[expression] = self.conn.execute(
                    f"SELECT t.id, t.text, t.created_at, d.sz FROM {table.fts} "
                    f"CROSS JOIN {table.rows} t ON t.id = {table.fts}.rowid "
                    f"CROSS JOIN {table.fts}_docsize d ON d.id = t.id "
                    f"WHERE {table.fts} MATCH ? AND {table.fts}.rowid BETWEEN ? AND ? "
                    f"AND t.{table.owner_column} = ? ORDER BY {table.fts}.rowid DESC LIMIT ?",
                    (expression, span.low, span.high, scope, per_expression)).fetchall()
            rows = fetched[expression][:per_expression]  # the all-words pass fetched more
            if expression in terms and rows:  # one word's own matches: its df comes free
                matching = _estimate(len(rows), per_expression, span, rows[-1][0])
                idfs[expression] = idf(span.issued, matching)
            for row in rows:
                candidates[row[0]] = row
                present.setdefault(row[0], set()).update(holds)
        if not candidates:
            return []
        for term in terms:
            if term not in idfs:
                self._sample(table, term, span, idfs)
        record = self.conn.execute(f"SELECT block FROM {table.fts}_data WHERE id = 1").fetchone()
        scorer = Scorer(phrases, [idfs[term] for term in terms],
                        average_length(record[0] if record else None))
        rows = [row for row in candidates.values()
                if not require_all or scorer.holds_all(row[1])]
        # FTS5's own token count per row (its _docsize table) spares tokenizing every candidate
        scored = sorted(((scorer.score(text, read_varint(size, 0)[0], present[note_id]),
                          note_id, text, created)
                         for note_id, text, created, size in rows),
                        key=lambda r: (-r[0], -r[1]))
        return [Hit(id=note_id, text=text, snippet=snippet(text, phrases), score=score,
                    created_at=created) for score, note_id, text, created in scored[:k]]

    def _sample(self, table: _Table, term: str, span: _Span, idfs: dict[str, float]) -> int:
        """Record one phrase's IDF, estimated from its newest SAMPLE matches in the scope;
        return the oldest id among them (the scope's first id if it has fewer)."""
        matches = self.conn.execute(
            f"SELECT rowid FROM {table.fts} WHERE {table.fts} MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid DESC LIMIT ?", (term, span.low, span.high, SAMPLE)).fetchall()
        oldest = matches[-1][0] if len(matches) == SAMPLE else span.low
        idfs[term] = idf(span.issued, _estimate(len(matches), SAMPLE, span, oldest))
        return int(oldest)


@dataclass(frozen=True)
class _Span:
    """A scope's id range and how many ids it has issued so far."""

    low: int
    high: int
    issued: int


def _estimate(found: int, limit: int, span: _Span, oldest: int) -> float:
    """How many rows of the scope match: exact when fewer than ``limit`` were found, else
    extrapolated from how far back the newest ``limit`` matches reach."""
    if found < limit:
        return found
    reached = span.low + span.issued - oldest + 1
    return min(span.issued, found * span.issued / max(reached, 1))


def _checked_note(text: str) -> str:
    """The note as stored; refuses empty and oversized notes with a clear message."""
    cleaned = clean_text(text).strip()
    if not cleaned:
        raise ValueError("a note needs some text")
    if len(cleaned) > MAX_NOTE_CHARS:
        raise NoteTooLarge(f"this note is {len(cleaned):,} characters; the limit is "
                           f"{MAX_NOTE_CHARS:,}. Split it into smaller notes.")
    return cleaned


def _shorten(text: str, limit: int = 120) -> str:
    """A one-line preview for listings."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"

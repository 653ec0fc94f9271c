"""Notes and chat history in SQLite FTS5: add, bm25 search with snippets, forget, recent.

Scoping lives in the row ids (memory/scopes.py): each scope's rows take ids in a range of
their own. A search hands FTS5 that rowid range, so another scope's rows are never even read,
and the final rows are joined back to their table and checked against the scope once more.

A search of the notes whose query words are all single words ranks them exactly, as FTS5's
bm25() would, from the impact index (memory/impact.py, memory/topk.py). The rest — chat
history, queries with a multi-word phrase such as "e-mail", or an index that does not count
the same notes as FTS5 — use the bounded search (memory/bounded.py), which stays fast at a
million notes by ranking only each word's newest matches.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from memory.bounded import BoundedSearch
from memory.hits import Hit, read_hits
from memory.impact import collection, index_notes, unindex_note
from memory.query import clean_text, query_terms
from memory.rank import phrase_tokens
from memory.scopes import HISTORY, NOTES, Table, reserve, scope_range
from memory.topk import TopK
from sqlitedb import transaction
from sqlitedb.database import Database

MAX_NOTE_CHARS = 10_000


class NoteTooLarge(ValueError):
    """A note over MAX_NOTE_CHARS; refused rather than silently cut."""


class Memory:
    """The notes and chat history of every scope, over one SQLite connection."""

    def __init__(self, db: Database) -> None:
        # writes on the writer; reads (searches above all) on the reader, which WAL lets read
        # the last commit while a write is under way. Both may be shared with other threads
        # and stores: a transaction or a read snapshot holds its connection's lock.
        self.writer = db.writer
        self.conn = db.reader
        self._bounded = BoundedSearch(self.conn)  # told of each write: its counts go stale
        self.inexact = 0  # searches that stopped at memory/topk.py's MAX_WORK (for benches)

    # -- notes ---------------------------------------------------------------------------

    def add(self, scope: str, text: str, effect_key: str = "") -> int:
        """Save a note for ``scope``; return its id. NoteTooLarge if over the limit.

        With ``effect_key`` (the tool call saving it) the note is saved once: the same key
        again returns the note saved the first time.
        """
        if not effect_key:
            return self.add_many(scope, [text])[0]
        cleaned = checked_note(text)
        with transaction(self.writer):
            row = self.writer.execute("SELECT note_id FROM memory_effects WHERE key = ?",
                                    (effect_key,)).fetchone()
            if row is not None:
                return int(row[0])
            note_id = reserve(self.writer, NOTES, scope, 1)
            self.writer.execute("INSERT INTO memory_notes (id, scope, text, created_at)"
                              " VALUES (?, ?, ?, ?)", (note_id, scope, cleaned, time.time()))
            self.writer.execute("INSERT INTO memory_effects (key, note_id) VALUES (?, ?)",
                              (effect_key, note_id))
            index_notes(self.writer, [(note_id, cleaned)])
            self._bounded.wrote()
        return note_id

    def add_many(self, scope: str, texts: Iterable[str]) -> list[int]:
        """Save several notes in one transaction (bulk import); return their ids."""
        cleaned = [checked_note(text) for text in texts]
        now = time.time()
        with transaction(self.writer):
            first = reserve(self.writer, NOTES, scope, len(cleaned))
            ids = list(range(first, first + len(cleaned)))
            self.writer.executemany(
                "INSERT INTO memory_notes (id, scope, text, created_at) VALUES (?, ?, ?, ?)",
                [(note_id, scope, text, now) for note_id, text in zip(ids, cleaned,
                                                                       strict=True)])
            index_notes(self.writer, zip(ids, cleaned, strict=True))
            self._bounded.wrote()
        return ids

    def search(self, scope: str, query: str, k: int = 5) -> list[Hit]:
        """The best ``k`` notes of ``scope`` for ``query`` by bm25, with snippets."""
        return self._search(NOTES, scope, query, k)

    def forget(self, scope: str, note_id: int) -> bool:
        """Delete one of ``scope``'s notes; False if it does not exist or is not theirs."""
        with transaction(self.writer):
            self._bounded.wrote()
            if self.writer.execute("SELECT 1 FROM memory_notes WHERE id = ? AND scope = ?",
                                 (note_id, scope)).fetchone() is None:
                return False
            unindex_note(self.writer, note_id)
            self.writer.execute("DELETE FROM memory_notes WHERE id = ?", (note_id,))
        return True

    def recent(self, scope: str, n: int = 10) -> list[Hit]:
        """``scope``'s latest notes, newest first."""
        bounds = scope_range(self.conn, scope)
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
        with self.writer.lock:
            self._bounded.wrote()
            for table in (NOTES, HISTORY):
                self.writer.execute(f"INSERT INTO {table.fts} ({table.fts}) VALUES ('optimize')")

    # -- chat history --------------------------------------------------------------------

    def add_history(self, chat: str, role: str, text: str) -> None:
        """Append one line of a chat's history."""
        with transaction(self.writer):
            line_id = reserve(self.writer, HISTORY, chat, 1)
            self.writer.execute(
                "INSERT INTO memory_history (id, chat, role, text, created_at) "
                "VALUES (?, ?, ?, ?, ?)", (line_id, chat, role, clean_text(text), time.time()))
            self._bounded.wrote()

    def history(self, chat: str, n: int = 20) -> list[tuple[str, str]]:
        """The chat's last ``n`` lines as (role, text), oldest first."""
        bounds = scope_range(self.conn, chat)
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

    def _search(self, table: Table, scope: str, query: str, k: int) -> list[Hit]:
        """Exactly from the impact index when it can (notes, single words), else bounded."""
        terms = query_terms(query)
        row = self.conn.execute(f"SELECT number, {table.sequence} FROM memory_scopes "
                                "WHERE scope = ?", (scope,)).fetchone()
        if not terms or row is None or k <= 0:
            return []
        phrases = [phrase_tokens(term) for term in terms]
        with self.conn.lock:  # one consistent snapshot for the few queries below
            self.conn.execute("BEGIN")
            try:
                totals = collection(self.conn) if table == NOTES else None
                if totals is not None and all(len(phrase) == 1 for phrase in phrases):
                    search = TopK(self.conn, row[0], [phrase[0] for phrase in phrases], k,
                                  *totals)
                    ranked = search.run()
                    self.inexact += not search.exact
                    return read_hits(self.conn, table, scope, ranked, phrases)
                return self._bounded.search(table, scope, row[0], row[1], terms, k)
            finally:
                self.conn.execute("COMMIT")


def checked_note(text: str) -> str:
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

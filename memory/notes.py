"""Notes and chat history in SQLite FTS5: add, bm25 search with snippets, forget, recent.

Scoping lives in the row ids (memory/scopes.py): each scope's rows take ids in a range of
their own. A search hands FTS5 that rowid range, so another scope's rows are never even read,
and the final rows are joined back to their table and checked against the scope once more.

A search of the notes whose query words are all single words ranks them exactly, as FTS5's
bm25() would, from the impact index (memory/impact.py, memory/topk.py). The rest — chat
history, queries with a multi-word phrase such as "e-mail", or an index that does not count
the same notes as FTS5 — use the bounded search below.

The bounded search stays fast at a million notes: only a word's newest CANDIDATES
matches are ranked (FTS5 walks rowids newest first and stops there), by BM25 computed in
memory/rank.py from match counts sampled once and cached until the next write. Several
words: FTS5's AND finds the notes with all of them among the rarest word's newest matches
(the commonest words, which its AND would walk in full, are checked in Python instead);
notes with any of them (each word, and each pair of rarer words, bringing its own newest
matches) only fill up to k. Candidates are ranked first from their lengths alone and only
the best few texts are read, except a common word's, which may occur twice in a note.
docs/memory.md ("How search stays fast at a million notes") has the trade-off.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from memory.impact import collection, index_notes, unindex_note
from memory.query import all_of, clean_text, query_terms
from memory.rank import (
    K1,
    B,
    Scorer,
    average_length,
    estimate_matches,
    idf,
    phrase_tokens,
    read_varint,
    snippet,
    walked_words,
)
from memory.scopes import HISTORY, NOTES, STRIDE, Table, reserve, scope_range
from memory.topk import TopK
from sqlitedb import transaction
from sqlitedb.database import Database

MAX_NOTE_CHARS = 10_000
CANDIDATES = 300
SAMPLE = 500
# FTS5's AND walks every match of each word in the rowid range (~0.1 µs each, newest first):
# a word with more than WALK matches there is left out of it and checked in Python instead,
# as long as at least DENSE of the notes hold all the words left out (so that most notes the
# AND returns pass the check)
WALK = 10_000
DENSE = 0.1
CACHE_TERMS = 4096
SHORTLIST = 10  # candidates read and scored exactly, per result wanted
COMMON = 0.02  # the share of a scope's notes above which a word is common


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


class Memory:
    """The notes and chat history of every scope, over one SQLite connection."""

    def __init__(self, db: Database) -> None:
        # writes on the writer; reads (searches above all) on the reader, which WAL lets read
        # the last commit while a write is under way. Both may be shared with other threads
        # and stores: a transaction or a read snapshot holds its connection's lock.
        self.writer = db.writer
        self.conn = db.reader
        # how many rows each (index, scope, phrase) matches: sampling a word costs a query,
        # and the same words come back query after query. Any write empties it (ours are
        # counted in _writes; the writer's, and another process's, show in the reader's
        # PRAGMA data_version).
        self._matching: dict[tuple[str, int, str], float] = {}
        self._oldest: dict[tuple[str, int, str], int] = {}  # of the newest SAMPLE matches
        self._matching_stamp: tuple[int, int] = (-1, -1)
        self._writes = 0
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
            self._writes += 1
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
            self._writes += 1
        return ids

    def search(self, scope: str, query: str, k: int = 5) -> list[Hit]:
        """The best ``k`` notes of ``scope`` for ``query`` by bm25, with snippets."""
        return self._search(NOTES, scope, query, k)

    def forget(self, scope: str, note_id: int) -> bool:
        """Delete one of ``scope``'s notes; False if it does not exist or is not theirs."""
        with transaction(self.writer):
            self._writes += 1
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
            self._writes += 1
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
            self._writes += 1

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
        """Notes with all the words first; notes with any of them only to fill up to ``k``."""
        terms = query_terms(query)
        row = self.conn.execute(f"SELECT number, {table.sequence} FROM memory_scopes "
                                "WHERE scope = ?", (scope,)).fetchone()
        if not terms or row is None or k <= 0:
            return []
        low = row[0] * STRIDE
        span = _Span(low=low, high=low + STRIDE - 1, issued=row[1])
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
                    return self._hits(table, scope, ranked, phrases)
                matching = self._matching_counts(table, span, terms)
                if len(terms) == 1:
                    hits = self._ranked(table, scope, terms, [terms], span, k, matching)
                else:
                    # notes with all the words, among the newest CANDIDATES matches of the
                    # rarest: FTS5's AND finds them within that window, but the commonest
                    # words are checked on the notes it returns (see WALK)
                    rarest = min(terms, key=lambda term: matching[term])
                    window = replace(span, low=self._oldest[(table.fts, span.low, rarest)])
                    share = (span.low + span.issued - window.low) / max(span.issued, 1)
                    walked = walked_words(terms, rarest, matching, share, span.issued,
                                          WALK, DENSE)
                    if matching[rarest] <= SHORTLIST * k:
                        # so few notes that reading them all beats FTS5's AND, whose cost
                        # follows a word's matches in every scope, not just this one's
                        walked = [rarest]
                    hits = self._ranked(table, scope, terms, [walked], window, k,
                                        matching, require_all=len(walked) < len(terms))
                if len(hits) < k and len(terms) > 1:
                    seen = {hit.id for hit in hits}
                    # each word brings its own newest matches, so a rare word is not crowded
                    # out of the candidates by a common one
                    # and notes with two of the rarer words, which their newest matches may
                    # not include (FTS5's AND is quick when neither word is common)
                    rarer = [t for t in terms if matching[t] <= COMMON * span.issued]
                    pairs = [[a, b] for i, a in enumerate(rarer) for b in rarer[i + 1:]]
                    hits += self._ranked(table, scope, terms,
                                         [[term] for term in terms] + pairs, span,
                                         k - len(hits), matching, seen)
            finally:
                self.conn.execute("COMMIT")
        return hits

    def _hits(self, table: Table, scope: str, ranked: list[tuple[float, int]],
              phrases: list[tuple[str, ...]]) -> list[Hit]:
        """The rows of these (score, id), in this order, with snippets."""
        rows = {row[0]: row[1:] for row in self.conn.execute(
            f"SELECT id, text, created_at FROM {table.rows} WHERE id IN "
            f"({','.join('?' * len(ranked))}) AND {table.owner_column} = ?",
            (*(note_id for _, note_id in ranked), scope))}
        return [Hit(id=note_id, text=rows[note_id][0], snippet=snippet(rows[note_id][0], phrases),
                    score=score, created_at=rows[note_id][1])
                for score, note_id in ranked if note_id in rows]

    def _ranked(self, table: Table, scope: str, terms: list[str], groups: list[list[str]],
                span: _Span, k: int, matching: dict[str, float],
                seen: AbstractSet[int] = frozenset(), require_all: bool = False) -> list[Hit]:
        """Top ``k`` by BM25 among the newest CANDIDATES notes holding all the words of one of
        the ``groups`` (each group bringing its share), leaving out ``seen``; with
        ``require_all``, only notes holding every phrase of ``terms``. The candidates are first
        ranked from their ids and lengths alone, as if each word occurred once in them, then
        read and scored exactly best first, SHORTLIST * k of them and then ever more at a time
        until ``k`` qualify."""
        per_group = max(CANDIDATES // max(sum(len(group) == 1 for group in groups), 1), 1)
        weights = {phrase_tokens(term): idf(span.issued, matching[term]) for term in terms}
        average = max(self._average_length(table), 1e-9)
        phrases = [phrase_tokens(term) for term in terms]
        present: dict[int, set[tuple[str, ...]]] = {}
        sizes: dict[int, int] = {}
        gains: dict[int, float] = {}  # the sum of the IDFs of the words a note surely holds
        # a word in many notes often occurs twice in one, which ranking by length alone would
        # miss: the candidates it brings are all read (its newest matches lie close together,
        # so that is cheap); a rarer word is all but never repeated in a short note
        read_all: set[int] = set()
        for group in groups:
            holds = {phrase_tokens(term) for term in group}
            common = any(matching[term] > COMMON * span.issued for term in group)
            gain = sum(weights[phrase] for phrase in (phrases if require_all else holds))
            for note_id, size in self.conn.execute(
                    f"SELECT {table.fts}.rowid, d.sz FROM {table.fts} "
                    f"CROSS JOIN {table.fts}_docsize d ON d.id = {table.fts}.rowid "
                    f"WHERE {table.fts} MATCH ? AND {table.fts}.rowid BETWEEN ? AND ? "
                    f"ORDER BY {table.fts}.rowid DESC LIMIT ?",
                    (all_of(group), span.low, span.high, per_group)):
                if note_id in seen:
                    continue
                if common:
                    read_all.add(note_id)
                sizes[note_id] = size[0] if size[0] < 0x80 else read_varint(size, 0)[0]
                if note_id in gains:
                    gains[note_id] += gain
                    present[note_id] |= holds
                else:
                    gains[note_id] = gain
                    present[note_id] = set(holds)
        factors: dict[int, float] = {}  # BM25's weight of one occurrence, by note length
        estimates: dict[int, float] = {}
        for note_id, length in sizes.items():
            if length not in factors:
                factors[length] = (K1 + 1) / (1 + K1 * (1 - B + B * length / average))
            estimates[note_id] = gains[note_id] * factors[length]
        ordered = sorted(estimates, key=lambda note_id: (note_id in read_all,
                                                         estimates[note_id], note_id),
                         reverse=True)
        scorer = Scorer(phrases, [weights[phrase] for phrase in phrases], average)
        scored: list[tuple[float, int, str, float]] = []
        start, step = 0, len(read_all) + SHORTLIST * k
        while start < len(ordered):
            chunk = ordered[start:start + step]
            start, step = start + step, step * 4  # few round trips when few notes qualify
            rows = self.conn.execute(
                f"SELECT id, text, created_at FROM {table.rows} "
                f"WHERE id IN ({','.join('?' * len(chunk))}) AND {table.owner_column} = ?",
                (*chunk, scope)).fetchall()
            for note_id, text, created in rows:
                if require_all:
                    if not scorer.holds_all(text):
                        continue
                    present[note_id] = set(phrases)
                scored.append((scorer.score(text, sizes[note_id], present[note_id]),
                               note_id, text, created))
            if len(scored) >= k:
                break
        scored.sort(key=lambda r: (-r[0], -r[1]))
        return [Hit(id=note_id, text=text, snippet=snippet(text, phrases), score=score,
                    created_at=created) for score, note_id, text, created in scored[:k]]

    def _average_length(self, table: Table) -> float:
        """Tokens per row of the index."""
        record = self.conn.execute(f"SELECT block FROM {table.fts}_data WHERE id = 1").fetchone()
        return average_length(record[0] if record else None)

    def _matching_counts(self, table: Table, span: _Span,
                         terms: list[str]) -> dict[str, float]:
        """How many of the scope's rows each phrase matches (cached until the next write)."""
        stamp = (self.conn.execute("PRAGMA data_version").fetchone()[0], self._writes)
        if stamp != self._matching_stamp or len(self._matching) > CACHE_TERMS:
            self._matching.clear()
            self._oldest.clear()
            self._matching_stamp = stamp
        counts: dict[str, float] = {}
        for term in terms:
            key = (table.fts, span.low, term)
            if key not in self._matching:
                self._matching[key], self._oldest[key] = self._sample(table, term, span)
            counts[term] = self._matching[key]
        return counts

    def _sample(self, table: Table, term: str, span: _Span) -> tuple[float, int]:
        """How many rows of the scope one phrase matches, estimated from its newest SAMPLE
        matches (exact when it has fewer), and the oldest id among them (the scope's first
        id if it has fewer)."""
        matches = self.conn.execute(
            f"SELECT rowid FROM {table.fts} WHERE {table.fts} MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid DESC LIMIT ?", (term, span.low, span.high, SAMPLE)).fetchall()
        oldest = matches[-1][0] if len(matches) == SAMPLE else span.low
        return estimate_matches(len(matches), SAMPLE, span.low + span.issued - oldest + 1,
                                span.issued), int(oldest)


@dataclass(frozen=True)
class _Span:
    """A scope's id range and how many ids it has issued so far."""

    low: int
    high: int
    issued: int


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

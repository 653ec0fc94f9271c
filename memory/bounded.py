"""The bounded search: BM25 over a scope's newest matches, fast at a million notes.

Chat history, queries with a multi-word phrase such as "e-mail", and an index that does not
count the same notes as FTS5 are searched here (memory/notes.py sends every other search of
the notes to memory/topk.py, which ranks exactly).

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

import sqlite3
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, replace

from memory.hits import Hit
from memory.query import all_of
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
from memory.scopes import STRIDE, Table

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


@dataclass(frozen=True)
class Span:
    """A scope's id range and how many ids it has issued so far."""

    low: int
    high: int
    issued: int


class BoundedSearch:
    """The bounded search over one connection, with its cache of sampled match counts."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        # how many rows each (index, scope, phrase) matches: sampling a word costs a query,
        # and the same words come back query after query. Any write empties it (ours are
        # counted by wrote(); another connection's show in PRAGMA data_version).
        self._matching: dict[tuple[str, int, str], float] = {}
        self._oldest: dict[tuple[str, int, str], int] = {}  # of the newest SAMPLE matches
        self._matching_stamp: tuple[int, int] = (-1, -1)
        self._writes = 0

    def wrote(self) -> None:
        """Our connection wrote to the tables: the cached counts are stale."""
        self._writes += 1

    def search(self, table: Table, scope: str, number: int, issued: int, terms: list[str],
               k: int) -> list[Hit]:
        """Notes with all the words first; notes with any of them only to fill up to ``k``.
        ``number`` and ``issued``: the scope's number and how many ids it has issued (called
        inside a transaction, for one consistent snapshot)."""
        low = number * STRIDE
        span = Span(low=low, high=low + STRIDE - 1, issued=issued)
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
        return hits

    def _ranked(self, table: Table, scope: str, terms: list[str], groups: list[list[str]],
                span: Span, k: int, matching: dict[str, float],
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

    def _matching_counts(self, table: Table, span: Span,
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

    def _sample(self, table: Table, term: str, span: Span) -> tuple[float, int]:
        """How many rows of the scope one phrase matches, estimated from its newest SAMPLE
        matches (exact when it has fewer), and the oldest id among them (the scope's first
        id if it has fewer)."""
        matches = self.conn.execute(
            f"SELECT rowid FROM {table.fts} WHERE {table.fts} MATCH ? AND rowid BETWEEN ? AND ? "
            "ORDER BY rowid DESC LIMIT ?", (term, span.low, span.high, SAMPLE)).fetchall()
        oldest = matches[-1][0] if len(matches) == SAMPLE else span.low
        return estimate_matches(len(matches), SAMPLE, span.low + span.issued - oldest + 1,
                                span.issued), int(oldest)

"""The exact BM25 top k of one scope's notes, from the impact index, with provable pruning.

Scores are FTS5's ``bm25()`` to the last bit: the same formula, constants and order of
operations (memory/rank.py), FTS5's own row count, average length and per-note length, and
each word's count of notes in the whole table (its IDF). Ties go to the newest note, as
``ORDER BY bm25(…), rowid DESC`` does.

The index keeps a word's notes in buckets (tf, length): a bucket's notes all get the same
weight from that word, and a note of length L holds a word only in that word's buckets at L.
The search is MaxScore-style dynamic pruning over the buckets, one note length at a time:

* A bucket is *generated* when its notes become tracked candidates, or *probed* when it is
  only checked against the candidates tracked (a common word's big bucket can only add to
  notes a rarer word brought).
* A tracked note has a *signature* (memory/signatures.py): its length and, per query word,
  its tf or "unknown". A word is unknown in a note only while some bucket of it at that
  length is unread, so the note scores at most its known part plus each unknown word's best
  unread bucket (with no more tf than the tokens left). A note not tracked at L scores at
  most the sum of each word's best bucket at L not generated.
* Each step works on what could score highest — generating at a length, or settling a
  signature by probing a word's next buckets or reading the notes' texts, whichever the
  cost model finds cheaper — and the search stops when nothing unsettled or untracked can
  reach the k-th best known score: a proof that the answer is exact.

Past MAX_WORK the best known answer is returned instead and ``exact`` is False (docs/memory.md
has how often and what it costs). Hand-written: neither FTS5 nor a maintained library keeps
postings ordered by impact inside SQLite.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from array import array

from memory.impact import bucket, word_counts
from memory.rank import idf
from memory.scopes import STRIDE
from memory.signatures import UNKNOWN, Signature, Signatures

# Costs, in units of one posting read from a bucket and checked against a set (~0.05 µs):
GENERATE_COST = 2  # a posting that becomes a tracked note (a Python set entry)
QUERY_COST = 60  # one more SQL query
TEXT_COST = 130  # reading one note's text (a random page)...
TOKEN_COST = 2  # ...and tokenizing it, per token
TEXT_BATCH = 64  # texts read per step, newest first (ties go to the newest)
# Past this much work (a few ms; the bench's hardest queries, 3 common words at a million
# notes, need up to ~10x more to prove) the best known answer instead: see docs/memory.md
MAX_WORK = 26_000
EFFORT = 8  # notes read per result wanted in that answer


class TopK(Signatures):
    """One search: ``run()`` returns [(score, note id)], best first, newest first on ties.

    ``scope`` is the scope's number (memory/scopes.py); ``rows`` and ``total_tokens`` are
    FTS5's counts for the whole table (memory/impact.py ``collection``)."""

    def __init__(self, conn: sqlite3.Connection, scope: int, phrases: list[str], k: int,
                 rows: int, total_tokens: int) -> None:
        words = list(dict.fromkeys(phrases))
        counts = dict(conn.execute(
            f"SELECT word, notes FROM memory_note_words WHERE word IN "
            f"({','.join('?' * len(words))})", words).fetchall())
        super().__init__(phrases, {word: idf(rows, int(counts.get(word, 0))) for word in words},
                         k, total_tokens / rows if rows else 1.0)
        self.conn = conn
        self.scope = scope
        self.base = scope * STRIDE  # notes are tracked by their offset from it
        self.sizes: dict[tuple[int, int, int], int] = {}  # (word, tf, length) -> notes
        for index, word in enumerate(self.words):
            for tf, length, notes in conn.execute(
                    "SELECT tf, length, notes FROM memory_note_buckets WHERE scope = ? "
                    "AND word = ? ORDER BY length, tf", (scope, word)):
                self.sizes[(index, tf, length)] = notes
                self.unread.setdefault((index, length), []).append(tf)
                self.ungenerated.setdefault((index, length), []).append(tf)
        self.lengths = sorted({length for _, length in self.unread})
        # buckets read only to check the notes tracked: length -> (word, tf) -> offsets
        self.probed: dict[int, dict[tuple[int, int], array[int]]] = {}
        # what could still score, best first: (-bound, length, version, signature or ())
        self.queue: list[tuple[float, int, int, Signature]] = []
        self.version: dict[int, int] = {}  # per length: entries of an older one are stale
        self.uppers: dict[Signature, float] = {}  # as queued (a length's, until it changes)
        self.exact = True
        self.work = 0  # in the cost units above

    def _push(self, length: int) -> None:
        """(Re)queue what could still score at ``length``: its untracked notes and each of
        its signatures with unknown words, with their bounds as they are now."""
        self.version[length] = version = self.version.get(length, 0) + 1
        bound = self.untracked(length)
        if bound > 0.0:
            heapq.heappush(self.queue, (-bound, length, version, ()))
        for sig in self.by_length.get(length, ()):
            if UNKNOWN in sig:
                self.uppers[sig] = bound = self.upper(sig)
                heapq.heappush(self.queue, (-bound, length, version, sig))

    # -- the search ------------------------------------------------------------------------

    def run(self) -> list[tuple[float, int]]:
        """Work on whatever could score highest until nothing left can reach the top k."""
        for length in self.lengths:
            self._push(length)
        while True:
            if self.work > MAX_WORK:
                self.exact = False
                return self._best_effort()
            theta = self.threshold()
            floor = theta - 1e-9 * max(1.0, abs(theta))  # rounding: bounds sum differently
            while self.queue and self.queue[0][2] != self.version[self.queue[0][1]]:
                heapq.heappop(self.queue)  # stale: its length has changed since
            if not self.queue or -self.queue[0][0] < floor:
                return self._ranked(floor)
            length = self.queue[0][1]
            sig = self.queue[0][3]
            if sig:
                self._settle(sig, floor)
            else:
                self._generate(length)
            self._push(length)

    def _generate(self, length: int) -> None:
        """Track the notes of the bucket at ``length`` that lowers the bound of the notes
        not tracked there the most per posting read."""
        best, pick = -1.0, -1
        for i, weight in enumerate(self.weights):
            tfs = self.ungenerated.get((i, length))
            if not tfs:
                continue
            below = self.impact(tfs[-2], length) if len(tfs) > 1 else 0.0
            gain = weight * (self.impact(tfs[-1], length) - below)
            value = gain / (self.sizes[(i, tfs[-1], length)] * GENERATE_COST + QUERY_COST)
            if value > best:
                best, pick = value, i
        self._load(pick, self.ungenerated[(pick, length)][-1], length, generate=True)

    def _settle(self, sig: Signature, floor: float) -> None:
        """Learn more of one signature's unknown words: probe a word's best buckets at its
        length, as many as it takes to bring the signature's bound below ``floor`` (or all of
        them), or read the notes' texts, whichever costs less per note that needs it."""
        length = sig[0]
        per_text = TEXT_COST + TOKEN_COST * length
        room = length - sum(tf for tf in sig[1:] if tf > 0)
        bound = self.upper(sig)
        cheapest, pick = math.inf, -1
        for i, tf in enumerate(sig[1:]):
            if tf != UNKNOWN:
                continue
            tfs = self.unread[(i, length)]
            rest = bound - self.weights[i] * self.impact(min(tfs[-1], room), length)
            cost = 0
            for position in range(len(tfs) - 1, -1, -1):
                cost += self.sizes[(i, tfs[position], length)] + QUERY_COST
                below = self.weights[i] * self.impact(min(tfs[position - 1], room), length) \
                    if position else 0.0
                if rest + below < floor:
                    break  # the notes not in these buckets fall out of reach
            needing = sum(len(self.groups[other]) for other in self.by_length[length]
                          if other[i + 1] == UNKNOWN and self.uppers[other] >= floor)
            if cost / max(needing, 1) < cheapest:
                cheapest, pick = cost / max(needing, 1), i
        if per_text <= cheapest:
            self._read_texts(heapq.nlargest(TEXT_BATCH, self.groups[sig]), length)
        else:
            self._load(pick, self.unread[(pick, length)][-1], length, generate=False)

    # -- reading -------------------------------------------------------------------------

    def _load(self, index: int, tf: int, length: int, generate: bool) -> None:
        """Read bucket (word ``index``, ``tf``, ``length``): its tracked notes learn the
        word's tf; with ``generate`` its other notes become tracked too."""
        key = (index, tf)
        held = self.probed.get(length, {}).get(key)
        if held is None:
            held = bucket(self.conn, self.scope, self.words[index], tf, length)
            self.work += QUERY_COST + len(held)
            self.unread[(index, length)].remove(tf)
        if generate:
            self.ungenerated[(index, length)].remove(tf)
            self.probed.get(length, {}).pop(key, None)
            offsets = set(held)
            self.work += len(offsets) * (GENERATE_COST - 1)
            for sig in [sig for sig in self.by_length.get(length, ())
                        if sig[index + 1] == UNKNOWN]:
                moving = self.groups[sig] & offsets
                if moving:
                    self.regroup(sig, moving, {index: tf})
            fresh = offsets.difference(self.signature)
            if fresh:
                self._track(fresh, length, index, tf)
        else:
            self.probed.setdefault(length, {})[key] = held
            self._learn(set().union(*(self.groups[sig] for sig in self.by_length.get(length, ())
                                      if sig[index + 1] == UNKNOWN)), index, tf, held)
        if not self.unread[(index, length)]:
            self.all_read(index, length)

    def _learn(self, notes: set[int], index: int, tf: int, held: array[int]) -> None:
        """Those of ``notes`` in ``held`` (one bucket's offsets) hold word ``index`` ``tf``
        times."""
        moves: dict[Signature, set[int]] = {}
        for offset in notes.intersection(held) if notes else ():
            moves.setdefault(self.signature[offset], set()).add(offset)
        for old, moving in moves.items():
            self.regroup(old, moving, {index: tf})

    def _track(self, fresh: set[int], length: int, index: int, tf: int) -> None:
        """Start tracking these notes of ``length`` tokens, which hold word ``index`` ``tf``
        times; what the buckets probed at that length say about them is applied too."""
        blank = [UNKNOWN] * (len(self.words) + 1)
        blank[0], blank[index + 1] = length, tf
        for i in range(len(self.words)):
            if blank[i + 1] == UNKNOWN and not self.unread.get((i, length)):
                blank[i + 1] = 0
        sig = self.normal(tuple(blank))
        self.theta = None
        self.group(sig).update(fresh)
        self.signature.update(dict.fromkeys(fresh, sig))
        for (other, other_tf), held in self.probed.get(length, {}).items():
            if other != index:
                self.work += len(held)
                self._learn(fresh, other, other_tf, held)

    def _read_texts(self, offsets: list[int], length: int) -> None:
        """Learn every word of these notes from their texts."""
        self.work += len(offsets) * (TEXT_COST + TOKEN_COST * length)
        moves: dict[tuple[Signature, Signature], set[int]] = {}
        counts = word_counts(self.conn, self.base, offsets, self.words)
        for offset in offsets:  # (a note not found, never in one snapshot, holds none)
            old = self.signature[offset]
            new = (old[0], *counts.get(offset, [0] * len(self.words)))
            moves.setdefault((old, new), set()).add(offset)
        for (old, new), moving in moves.items():
            self.regroup(old, moving, dict(enumerate(new[1:])))

    # -- the answer ----------------------------------------------------------------------

    def _best_effort(self) -> list[tuple[float, int]]:
        """Past MAX_WORK: read the texts of the notes that could score best, EFFORT * k of
        them, and rank what is known (words still unknown in a note count as absent)."""
        wanted = EFFORT * self.k
        while len(self.signature) < self.k and any(self.untracked(length) > 0.0
                                                   for length in self.lengths):
            self._generate(max(self.lengths, key=self.untracked))
        for sig in sorted((sig for sig, members in self.groups.items()
                           if members and UNKNOWN in sig), key=self.upper, reverse=True):
            if wanted <= 0:
                break
            picked = heapq.nlargest(wanted, self.groups[sig])
            wanted -= len(picked)
            self._read_texts(picked, sig[0])
        return self._ranked(-math.inf)

    def _ranked(self, floor: float) -> list[tuple[float, int]]:
        """The k best tracked notes scoring at least ``floor``, ties newest first."""
        scored = sorted(((self.score(sig), sig) for sig, members in self.groups.items()
                         if members), reverse=True)
        ranked: list[tuple[float, int]] = []
        for score, sig in scored:
            if score < floor or (len(ranked) >= self.k and score < ranked[-1][0]):
                break  # only a tie with the last one taken could still come in
            ranked += [(score, self.base + offset)
                       for offset in heapq.nlargest(self.k, self.groups[sig])]
        ranked.sort(key=lambda pair: (-pair[0], -pair[1]))
        return ranked[:self.k]

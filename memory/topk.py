"""The exact BM25 top k of one scope's notes, reading the impact index best first.

Scores are FTS5's ``bm25()`` to the last bit: the same formula, constants and order of
operations (memory/rank.py), FTS5's own row count, average length and per-note length, and
each word's count of notes in the whole table (what FTS5's IDF counts). Ties go to the
newest note, as ``ORDER BY bm25(…), rowid DESC`` does.

How it stops early. A word's notes are grouped in buckets (tf, length); one bucket's notes
all get the same weight from that word. Notes are tracked by *signature*: their length and,
per query word, the tf read so far (or unknown), so every note of a signature has the same
known part of its score (the lower bound) and the same most its unknown words could add
(from the best bucket of that word and length not read yet, and the tokens the note has
left). Buckets are read best first (weight × word IDF) in growing batches until the k-th
best lower bound is above anything a note not read yet could score; then the notes that
could still reach it but miss a word are settled, either by reading that word's remaining
buckets at their length or by looking them up, whichever reads fewer rows.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from dataclasses import dataclass, field

from memory.impact import decode
from memory.rank import K1, B, tokens
from memory.scopes import STRIDE

FIRST_BATCH = 256  # postings read in the first round; each round reads twice the last
MAX_WORK = 15_000  # past this, the best known answer (see _best_effort)
EFFORT = 16  # notes read per result wanted in that answer
QUERY_COST = 30  # one more query costs about as much as this many postings read
TEXT_COST = 40  # reading one note's text (a random page) costs about this many postings
CHUNK = 500  # ids per IN (...) list
UNKNOWN = -1


def idf(rows: int, matching: int) -> float:
    """FTS5's IDF, evaluated as FTS5 evaluates it."""
    value = math.log((rows - matching + 0.5) / (matching + 0.5))
    return value if value > 0.0 else 1e-6


@dataclass
class _Word:
    """One distinct query word: its IDF times how many query phrases are it, and what of its
    buckets is still unread."""

    word: str
    weight: float
    unread: dict[int, list[int]] = field(default_factory=dict)  # length -> tfs, best last
    left: dict[int, int] = field(default_factory=dict)  # length -> notes in unread buckets


class TopK:
    """One search: ``run()`` returns [(score, note id)], best first, newest first on ties.

    ``scope`` is the scope's number (memory/scopes.py); ``rows`` and ``total_tokens`` are
    FTS5's counts for the whole table (memory/impact.py ``collection``)."""

    def __init__(self, conn: sqlite3.Connection, scope: int, phrases: list[str], k: int,
                 rows: int, total_tokens: int) -> None:
        self.conn, self.scope, self.k = conn, scope, k
        self.base = scope * STRIDE  # notes are tracked by their offset from it
        self.average = total_tokens / rows if rows else 1.0
        self.phrases = phrases
        distinct = list(dict.fromkeys(phrases))
        counts = dict(conn.execute(
            f"SELECT word, notes FROM memory_note_words WHERE word IN "
            f"({','.join('?' * len(distinct))})", distinct).fetchall())
        self.idfs = {word: idf(rows, int(counts.get(word, 0))) for word in distinct}
        self.words = [_Word(word, self.idfs[word] * phrases.count(word)) for word in distinct]
        self.impacts: dict[tuple[int, int], float] = {}
        self.counts: dict[tuple[int, int, int], int] = {}  # bucket (word, tf, length) -> notes
        order: list[tuple[float, int, int, int, int]] = []
        for index, word in enumerate(self.words):
            for tf, length, notes in conn.execute(
                    "SELECT tf, length, notes FROM memory_note_buckets WHERE scope = ? "
                    "AND word = ? ORDER BY length, tf", (scope, word.word)):
                word.unread.setdefault(length, []).append(tf)
                word.left[length] = word.left.get(length, 0) + notes
                self.counts[(index, tf, length)] = notes
                order.append((word.weight * self.impact(tf, length), index, tf, length, notes))
        order.sort(reverse=True)
        self.order = order
        self.next = 0  # order[:next] has been read (or read out of turn)
        self.unread_buckets = len(order)
        self.done: set[tuple[int, int, int]] = set()  # (word, tf, length) read
        self.signature: dict[int, tuple[int, ...]] = {}  # note id -> (length, tf per word…)
        self.groups: dict[tuple[int, ...], set[int]] = {}
        self.seen: set[int] = set()  # the notes of every signature
        self.by_length: dict[int, list[tuple[int, ...]]] = {}  # length -> signatures
        self.exact = True  # False once the answer is the best known one (see MAX_WORK)
        self.work = 0  # postings read, plus TEXT_COST per note read, plus QUERY_COST per query

    def impact(self, tf: int, length: int) -> float:
        """BM25's weight of a word occurring ``tf`` times in a note ``length`` tokens long,
        computed as FTS5 computes it (before the IDF)."""
        key = (tf, length)
        value = self.impacts.get(key)
        if value is None:
            value = (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / self.average))
            self.impacts[key] = value
        return value

    def score(self, signature: tuple[int, ...]) -> float:
        """The exact score of a fully known signature, summed in query order as FTS5 does."""
        length, total = signature[0], 0.0
        tfs = {word.word: signature[i + 1] for i, word in enumerate(self.words)}
        for phrase in self.phrases:
            tf = tfs[phrase]
            if tf > 0:
                total += self.idfs[phrase] * self.impact(tf, length)
        return total

    def run(self) -> list[tuple[float, int]]:
        """Read until the top k is certain, then rank it."""
        budget = FIRST_BATCH
        while True:
            bounds = self._bounds()
            if self.work > MAX_WORK:
                self.exact = False
                return self._best_effort(bounds)
            threshold = self._threshold(bounds)
            if threshold == -math.inf and self.unread_buckets:
                self._read_batch(budget)  # first find k notes, the best-looking first
                budget *= 2
                continue
            slack = 1e-12 * max(1.0, abs(threshold))
            best = self._best_unsettled(bounds, threshold)
            if best:  # settling the likeliest notes first raises the k-th best known score
                self._settle(best)
                continue
            over = self._lengths_over(threshold - slack)
            if over:
                self._read_cheapest(over, threshold - slack)
                continue
            unsettled = [sig for sig, (lower, extra) in bounds.items()
                         if extra > 0.0 and lower + extra >= threshold - slack]
            if not unsettled:
                return self._ranked(bounds, threshold - slack)
            self._settle(unsettled)

    def _lengths_over(self, floor: float) -> list[int]:
        """The note lengths at which a note not read yet could still reach ``floor``."""
        lengths = {length for word in self.words for length, tfs in word.unread.items() if tfs}
        return [length for length in lengths if self._unseen_at(length) >= floor]

    def _unseen_at(self, length: int, skip: dict[int, int] | None = None) -> float:
        """The most a note of ``length`` tokens not read yet can score (with ``skip``: as if
        that many more of each word's best unread buckets there were read)."""
        total = 0.0
        for index, word in enumerate(self.words):
            tfs = word.unread.get(length)
            left = len(tfs) - (skip.get(index, 0) if skip else 0) if tfs else 0
            if left > 0 and tfs:
                total += word.weight * self.impact(tfs[left - 1], length)
        return total

    def _read_cheapest(self, lengths: list[int], floor: float) -> None:
        """At each of these lengths, read the buckets that bring what a note not read yet
        could score there below ``floor`` for the fewest notes read: greedily, the bucket
        that lowers it the most per note read."""
        wanted: dict[tuple[int, int], list[int]] = {}
        for length in lengths:
            skip: dict[int, int] = {}
            while self._unseen_at(length, skip) >= floor:
                best, pick = -1.0, -1
                for index, word in enumerate(self.words):
                    tfs = word.unread.get(length, [])
                    left = len(tfs) - skip.get(index, 0)
                    if left <= 0:
                        continue
                    below = self.impact(tfs[left - 2], length) if left > 1 else 0.0
                    gain = word.weight * (self.impact(tfs[left - 1], length) - below)
                    value = gain / (self.counts[(index, tfs[left - 1], length)] + QUERY_COST)
                    if value > best:
                        best, pick = value, index
                if pick < 0:
                    break
                tfs = self.words[pick].unread[length]
                wanted.setdefault((pick, tfs[len(tfs) - 1 - skip.get(pick, 0)]),
                                  []).append(length)
                skip[pick] = skip.get(pick, 0) + 1
        planned = sum(self.counts[(index, tf, length)] + QUERY_COST
                      for (index, tf), picked in wanted.items() for length in picked)
        if self.work + planned > MAX_WORK:
            self.work = MAX_WORK + 1  # too much to read: the best known answer instead
            return
        for (index, tf), picked in wanted.items():
            self._read(index, tf, picked)

    def _best_unsettled(self, bounds: dict[tuple[int, ...], tuple[float, float]],
                        threshold: float) -> list[tuple[int, ...]]:
        """The signatures with unknown words that could score best, about k notes of them:
        settling them early raises the k-th best known score, which is what stops a
        search."""
        floor = max(threshold, self._unseen_best())
        ranked = sorted(((lower + extra, sig) for sig, (lower, extra) in bounds.items()
                         if extra > 0.0 and lower + extra > floor), reverse=True)
        picked: list[tuple[int, ...]] = []
        notes = 0
        for _, sig in ranked:
            if notes >= self.k:
                break
            picked.append(sig)
            notes += len(self.groups[sig])
        return picked

    # -- bounds --------------------------------------------------------------------------

    def _unknown_most(self, index: int, length: int, room: int) -> float:
        """The most word ``index`` can still add to a note of ``length`` tokens of which
        ``room`` are not yet known to be other query words."""
        tfs = self.words[index].unread.get(length)
        if not tfs or room <= 0:
            return 0.0
        return self.words[index].weight * self.impact(min(tfs[-1], room), length)

    def _bounds(self) -> dict[tuple[int, ...], tuple[float, float]]:
        """Per signature: the known part of the score and the most the rest can add."""
        bounds: dict[tuple[int, ...], tuple[float, float]] = {}
        for sig, members in self.groups.items():
            if not members:
                continue
            length, lower, room = sig[0], 0.0, sig[0]
            for i, tf in enumerate(sig[1:]):
                if tf > 0:
                    lower += self.words[i].weight * self.impact(tf, length)
                    room -= tf
            extra = sum(self._unknown_most(i, length, room)
                        for i, tf in enumerate(sig[1:]) if tf == UNKNOWN)
            bounds[sig] = (lower, extra)
        return bounds

    def _threshold(self, bounds: dict[tuple[int, ...], tuple[float, float]]) -> float:
        """The k-th best known score (minus infinity while fewer than k notes are known)."""
        seen = 0
        for sig in sorted(bounds, key=lambda sig: bounds[sig][0], reverse=True):
            seen += len(self.groups[sig])
            if seen >= self.k:
                return bounds[sig][0]
        return -math.inf

    def _unseen_best(self) -> float:
        """The most a note not read in any bucket yet can score."""
        lengths = {length for word in self.words for length, tfs in word.unread.items() if tfs}
        return max((sum(self._unknown_most(i, length, length) for i in range(len(self.words)))
                    for length in lengths), default=0.0)

    # -- reading -------------------------------------------------------------------------

    def _read_batch(self, budget: int) -> None:
        """Read the next buckets in best-first order, about ``budget`` postings of them."""
        wanted: dict[tuple[int, int], list[int]] = {}  # (word, tf) -> lengths
        read = 0
        while self.next < len(self.order) and read < budget:
            _, index, tf, length, notes = self.order[self.next]
            self.next += 1
            if (index, tf, length) in self.done:
                continue
            wanted.setdefault((index, tf), []).append(length)
            read += notes
        for (index, tf), lengths in wanted.items():
            self._read(index, tf, lengths)

    def _read(self, index: int, tf: int, lengths: list[int]) -> None:
        """Read the buckets (word, tf, length) for these lengths."""
        word = self.words[index]
        by_length: dict[int, set[int]] = {length: set() for length in lengths}
        for length, blob in self.conn.execute(
                "SELECT length, ids FROM memory_note_postings WHERE scope = ? AND word = ? "
                "AND tf = ? AND length BETWEEN ? AND ?",
                (self.scope, word.word, tf, min(lengths), max(lengths))):
            if length in by_length:
                by_length[length].update(decode(blob))
        self.work += QUERY_COST
        for length, offsets in by_length.items():
            self.work += self.counts[(index, tf, length)]
            self.done.add((index, tf, length))
            self.unread_buckets -= 1
            word.unread[length].remove(tf)
            word.left[length] -= self.counts[(index, tf, length)]
            self._learn(index, tf, length, offsets)

    def _learn(self, index: int, tf: int, length: int, offsets: set[int]) -> None:
        """These notes of ``length`` tokens hold word ``index`` ``tf`` times."""
        known = offsets & self.seen
        fresh = offsets - known if known else offsets
        if fresh:
            blank = [UNKNOWN] * (len(self.words) + 1)
            blank[0], blank[index + 1] = length, tf
            key = tuple(blank)
            self._group(key).update(fresh)
            self.signature.update(dict.fromkeys(fresh, key))
            self.seen |= fresh
        if known:
            # whole groups at a time: every note of a signature moves to the same new one
            for sig in [sig for sig in self.by_length.get(length, ())
                        if sig[index + 1] == UNKNOWN]:
                moving = self.groups[sig] & known
                if moving:
                    self._regroup(sig, moving, {index: tf})

    def _group(self, sig: tuple[int, ...]) -> set[int]:
        """The notes of one signature (a new, empty group if there is none yet)."""
        members = self.groups.get(sig)
        if members is None:
            members = self.groups[sig] = set()
            self.by_length.setdefault(sig[0], []).append(sig)
        return members

    def _regroup(self, old: tuple[int, ...], moving: set[int], tfs: dict[int, int]) -> None:
        """These notes of signature ``old`` hold these words (index -> tf; 0: not at all)."""
        new = list(old)
        for index, tf in tfs.items():
            new[index + 1] = tf
        key = tuple(new)
        self.groups[old] -= moving
        self._group(key).update(moving)
        self.signature.update(dict.fromkeys(moving, key))

    def _settle(self, unsettled: list[tuple[int, ...]]) -> None:
        """Find out the unknown words of the notes that could still make the top k: read
        the rest of a word's buckets at one length when that is cheaper than reading the
        notes' texts, and read the texts of the others."""
        needs: dict[tuple[int, int], int] = {}  # (word, length) -> notes that need it
        for sig in unsettled:
            for i, tf in enumerate(sig[1:]):
                if tf == UNKNOWN and self.words[i].unread.get(sig[0]):
                    needs[(i, sig[0])] = needs.get((i, sig[0]), 0) + len(self.groups[sig])
        # the cheapest first, so that a rare word is settled even when a common one cannot be
        for (index, length), notes in sorted(needs.items(), key=lambda need: min(
                need[1] * TEXT_COST, self.words[need[0][0]].left[need[0][1]])):
            left = self.words[index].left[length]
            if notes * TEXT_COST >= left and self.work + left + QUERY_COST <= MAX_WORK:
                for tf in list(self.words[index].unread[length]):
                    self._read(index, tf, [length])
        offsets = [offset for sig in unsettled
                   if any(tf == UNKNOWN and self.words[i].unread.get(sig[0])
                          for i, tf in enumerate(sig[1:]))
                   for offset in self.groups[sig]]
        if self.work + TEXT_COST * len(offsets) > MAX_WORK:
            self.work = MAX_WORK + 1  # too much to settle: the best known answer instead
            return
        self._read_texts(offsets)

    def _read_texts(self, offsets: list[int]) -> None:
        """Learn every unknown word of these notes from their texts."""
        self.work += TEXT_COST * len(offsets)
        moves: dict[tuple[tuple[int, ...], tuple[int, ...]], set[int]] = {}
        for start in range(0, len(offsets), CHUNK):
            chunk = offsets[start:start + CHUNK]
            for offset, text in self.conn.execute(
                    f"SELECT id - ?, text FROM memory_notes WHERE id IN "
                    f"({','.join('?' * len(chunk))})",
                    (self.base, *(self.base + offset for offset in chunk))):
                found = tokens(text)
                old = self.signature[offset]
                new = (old[0], *(found.count(word.word) if old[i + 1] == UNKNOWN
                                 else old[i + 1] for i, word in enumerate(self.words)))
                moves.setdefault((old, new), set()).add(offset)
        for (old, new), moving in moves.items():
            self._regroup(old, moving, {i: tf for i, tf in enumerate(new[1:])})

    # -- the answer ----------------------------------------------------------------------

    def _best_effort(self, bounds: dict[tuple[int, ...], tuple[float, float]],
                     ) -> list[tuple[float, int]]:
        """Past MAX_WORK: settle the newest notes of the signatures that could score best,
        EFFORT * k of them, and rank what is known (the rest counted without the words
        still unknown in them)."""
        picked: list[int] = []
        for sig in sorted(bounds, key=lambda sig: sum(bounds[sig]), reverse=True):
            if len(picked) >= EFFORT * self.k:
                break
            if bounds[sig][1] > 0.0:
                picked += heapq.nlargest(EFFORT * self.k - len(picked), self.groups[sig])
        self._read_texts(picked)
        return self._ranked(self._bounds(), -math.inf)

    def _ranked(self, bounds: dict[tuple[int, ...], tuple[float, float]],
                floor: float) -> list[tuple[float, int]]:
        """The k best of the notes that reach ``floor`` (words still unknown in a note count
        as absent), ties newest first."""
        scored = sorted(((self.score(tuple(0 if tf == UNKNOWN else tf for tf in sig)), sig)
                         for sig, (lower, _) in bounds.items() if lower >= floor),
                        reverse=True)
        ranked: list[tuple[float, int]] = []
        for score, sig in scored:
            if len(ranked) >= self.k and score < ranked[-1][0]:
                break  # only a tie with the last one taken could still come in
            ranked += [(score, self.base + offset)
                       for offset in heapq.nlargest(self.k, self.groups[sig])]
        ranked.sort(key=lambda pair: (-pair[0], -pair[1]))
        return ranked[:self.k]

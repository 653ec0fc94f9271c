"""What one exact top-k search knows of the notes it tracks: signatures, groups, score bounds.

memory/topk.py decides what to read next; this is the bookkeeping it reads from and writes to.
A tracked note has a *signature*: its length and, per query word, its tf or ``UNKNOWN``.
Notes of one signature form a group and score alike, so the search moves whole groups when it
learns a word's tf (``regroup``), and bounds a group's score from below (its known part,
``lower``) and from above (``upper``: each unknown word at its best unread bucket, with no
more tf than the tokens left). A note not tracked at a length scores at most ``untracked``.
``threshold`` is the k-th best known score, the bar everything unsettled must reach.
"""

from __future__ import annotations

import math

from memory.rank import K1, B

UNKNOWN = -1
Signature = tuple[int, ...]  # (length, tf of each query word or UNKNOWN)


class Signatures:
    """The tracked notes of one search, grouped by signature, with the bounds of their scores.

    ``idfs`` holds each query word once, in query order; ``average`` is FTS5's average note
    length. The search fills ``unread`` and ``ungenerated`` (word index, length -> the tfs of
    the buckets not yet read, or not yet made candidates; best last)."""

    def __init__(self, phrases: list[str], idfs: dict[str, float], k: int,
                 average: float) -> None:
        self.k = k
        self.average = average
        self.phrases = phrases
        self.words = list(idfs)
        self.idfs = idfs
        # for bounds only: a word twice in the query counts twice (exact sums: score())
        self.weights = [idfs[word] * phrases.count(word) for word in self.words]
        self.impacts: dict[tuple[int, int], float] = {}
        self.unread: dict[tuple[int, int], list[int]] = {}  # (word, length) -> tfs, best last
        self.ungenerated: dict[tuple[int, int], list[int]] = {}
        self.signature: dict[int, Signature] = {}  # tracked note offset -> signature
        self.groups: dict[Signature, set[int]] = {}
        self.by_length: dict[int, set[Signature]] = {}
        self.lowers: dict[Signature, float] = {}
        self.theta: float | None = None  # the k-th best known score, None: to recount
        self.last_theta = -math.inf  # the last one counted
        self.high: set[Signature] = set()  # the signatures that may hold the k-th best

    def impact(self, tf: int, length: int) -> float:
        """BM25's weight of a word occurring ``tf`` times in a note ``length`` tokens long,
        computed as FTS5 computes it (before the IDF)."""
        value = self.impacts.get((tf, length))
        if value is None:
            value = (tf * (K1 + 1.0)) / (tf + K1 * (1 - B + B * length / self.average))
            self.impacts[(tf, length)] = value
        return value

    def score(self, signature: Signature) -> float:
        """The exact score of a signature (unknown words counted as absent), summed in
        query order as FTS5 does."""
        length, total = signature[0], 0.0
        tfs = dict(zip(self.words, signature[1:], strict=True))
        for phrase in self.phrases:
            if tfs[phrase] > 0:
                total += self.idfs[phrase] * self.impact(tfs[phrase], length)
        return total

    # -- bounds ---------------------------------------------------------------------------

    def lower(self, sig: Signature) -> float:
        """The known part of a signature's score."""
        value = self.lowers.get(sig)
        if value is None:
            length = sig[0]
            value = self.lowers[sig] = sum(self.weights[i] * self.impact(tf, length)
                                           for i, tf in enumerate(sig[1:]) if tf > 0)
        return value

    def upper(self, sig: Signature) -> float:
        """The most a note of this signature can score."""
        length = sig[0]
        room = length
        total = self.lower(sig)
        for tf in sig[1:]:
            if tf > 0:
                room -= tf
        if room > 0:
            for i, tf in enumerate(sig[1:]):
                if tf == UNKNOWN:
                    best = self.unread[(i, length)][-1]
                    total += self.weights[i] * self.impact(best if best < room else room,
                                                           length)
        return total

    def untracked(self, length: int) -> float:
        """The most a note of ``length`` tokens not tracked yet can score."""
        total = 0.0
        for i, weight in enumerate(self.weights):
            tfs = self.ungenerated.get((i, length))
            if tfs:
                total += weight * self.impact(tfs[-1], length)
        return total

    def threshold(self) -> float:
        """The k-th best known score (minus infinity while fewer than k notes are known)."""
        if self.theta is None:
            # it never falls (notes are only added, known parts only grow): only the
            # signatures at or above the last one (``high``) can be the k-th best now
            self.theta, seen = -math.inf, 0
            for lower, sig in sorted(((self.lower(sig), sig) for sig in self.high),
                                     reverse=True):
                seen += len(self.groups[sig])
                if seen >= self.k:
                    self.theta = lower
                    break
            if self.theta > self.last_theta:
                self.last_theta = self.theta
                self.high = {sig for sig in self.high if self.lower(sig) >= self.theta}
        return self.theta

    # -- signatures ----------------------------------------------------------------------

    def normal(self, sig: Signature) -> Signature:
        """The signature with unknown words made absent where no tokens are left for them."""
        if UNKNOWN in sig and sum(tf for tf in sig[1:] if tf > 0) >= sig[0]:
            return tuple(0 if tf == UNKNOWN else tf for tf in sig)
        return sig

    def group(self, sig: Signature) -> set[int]:
        """The notes of one signature (a new, empty group if there is none yet)."""
        members = self.groups.get(sig)
        if members is None:
            members = self.groups[sig] = set()
            self.by_length.setdefault(sig[0], set()).add(sig)
            if self.lower(sig) >= self.last_theta:
                self.high.add(sig)
        return members

    def regroup(self, old: Signature, moving: set[int], tfs: dict[int, int]) -> None:
        """These notes of signature ``old`` hold these words (index -> tf; 0: not at all)."""
        new = list(old)
        for index, tf in tfs.items():
            new[index + 1] = tf
        key = self.normal(tuple(new))
        if key == old:
            return
        self.theta = None
        left = self.groups[old]
        left -= moving
        if not left:
            del self.groups[old]
            self.by_length[old[0]].discard(old)
            self.high.discard(old)
        self.group(key).update(moving)
        self.signature.update(dict.fromkeys(moving, key))

    def all_read(self, index: int, length: int) -> None:
        """Every bucket of word ``index`` at ``length`` is read: the notes there that were
        not in one of them do not hold the word."""
        for sig in [sig for sig in self.by_length.get(length, ()) if sig[index + 1] == UNKNOWN]:
            self.regroup(sig, set(self.groups[sig]), {index: 0})

"""BM25 scoring and snippets, in Python, over a small set of candidate notes.

FTS5's own ``bm25()`` counts every row a word matches, in the whole table, on every query (its
IDF), which alone costs ~40 ms for a word in half of a million notes. So memory/notes.py lets
FTS5 *find* the newest matching rows and scores them here with the same formula and constants
as FTS5 (k1 = 1.2, b = 0.75, IDF = ln((N - n + 0.5) / (n + 0.5)), 1e-6 when not above 0), from
collection statistics it estimates cheaply. The tokenizer below mirrors FTS5's
``unicode61 remove_diacritics 2``: case folded, diacritics removed, letters and digits only.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Collection, Sequence

K1 = 1.2
B = 0.75
WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Case and diacritics folded, as FTS5 compares tokens."""
    text = text.casefold()
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(char for char in decomposed if not unicodedata.combining(char))


def tokens(text: str) -> list[str]:
    """The folded tokens of ``text`` (folding the whole text once is what keeps this fast)."""
    return WORD.findall(fold(text))


def phrase_tokens(quoted: str) -> tuple[str, ...]:
    """The tokens of one quoted query phrase (as made by memory.query)."""
    return tuple(tokens(quoted[1:-1].replace('""', '"')))


def idf(rows: float, matching: float) -> float:
    """FTS5's inverse document frequency, evaluated as FTS5 evaluates it (fts5_aux.c: a value
    not above zero becomes 1e-6), for exact counts (memory/topk.py) and estimates alike."""
    # (an estimate of the matches may exceed the rows counted: never a log of a negative;
    # with exact counts the matches never do, and this is FTS5's expression to the bit)
    value = math.log((max(rows - matching, 0) + 0.5) / (matching + 0.5))
    return value if value > 0.0 else 1e-6


def count_phrase(doc: Sequence[str], phrase: tuple[str, ...]) -> int:
    """How many times the token sequence ``phrase`` occurs in ``doc``."""
    if not phrase:
        return 0
    if len(phrase) == 1:
        return doc.count(phrase[0])
    width = len(phrase)
    return sum(1 for i in range(len(doc) - width + 1) if tuple(doc[i:i + width]) == phrase)


class Scorer:
    """BM25 for one query: its phrases, their IDFs, and the average document length."""

    def __init__(self, phrases: list[tuple[str, ...]], idfs: list[float],
                 average_length: float) -> None:
        self.phrases = phrases
        self.weights = dict(zip(phrases, idfs, strict=True))
        self.average_length = max(average_length, 1e-9)
        self._longer = [phrase for phrase in dict.fromkeys(phrases) if len(phrase) > 1]
        single = sorted({phrase[0] for phrase in phrases if len(phrase) == 1}, key=len,
                        reverse=True)
        self._single = single
        # one C-speed scan per document finds every one-word phrase as a whole token
        self._words = re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, single)) +
                                 r")(?![^\W_])") if single else None

    def holds_all(self, text: str) -> bool:
        """Whether every phrase occurs in ``text`` as whole tokens."""
        folded = fold(text)
        if not all(word in folded for phrase in self.phrases for word in phrase):
            return False  # a cheap substring test rules out most notes
        doc = WORD.findall(folded)
        return all(count_phrase(doc, phrase) for phrase in self.phrases)

    def score(self, text: str, length: int, present: Collection[tuple[str, ...]] = ()) -> float:
        """BM25 of one document, given its text, its length in tokens and the phrases known
        to be in it (higher is better)."""
        folded = fold(text)
        norm = K1 * (1 - B + B * length / self.average_length)
        total = 0.0
        exact = False
        for word in self._single:
            found = folded.count(word)  # a substring count: an upper bound on the token count
            if found == 0:
                continue
            if found > 1 or (word,) not in present:
                exact = True  # only a real token scan can tell; rare for short notes
                break
            total += self.weights[(word,)] * (K1 + 1) / (1 + norm)
        if exact and self._words is not None:
            total = 0.0
            counts: dict[str, int] = {}
            for word in self._words.findall(folded):
                counts[word] = counts.get(word, 0) + 1
            for word, hits in counts.items():
                total += self.weights[(word,)] * hits * (K1 + 1) / (hits + norm)
        if self._longer:
            doc = WORD.findall(folded)
            for phrase in self._longer:
                hits = count_phrase(doc, phrase)
                if hits:
                    total += self.weights[phrase] * hits * (K1 + 1) / (hits + norm)
        return total


def snippet(text: str, phrases: list[tuple[str, ...]], width: int = 12) -> str:
    """About ``width`` words around the first hit, query words in [brackets]."""
    wanted = {token for phrase in phrases for token in phrase}
    words = list(WORD.finditer(text))
    if not words:
        return text[:80]
    hits = {i for i, match in enumerate(words) if fold(match.group()) in wanted}
    first = max(0, min(hits, default=0) - width // 3)
    last = min(len(words), first + width)
    pieces: list[str] = []
    cursor = words[first].start()
    for i in range(first, last):
        match = words[i]
        pieces += [text[cursor:match.start()], f"[{match.group()}]" if i in hits else match.group()]
        cursor = match.end()
    if last == len(words):
        pieces.append(text[cursor:])
    body = " ".join("".join(pieces).split())
    return ("…" if first > 0 else "") + body + ("…" if last < len(words) else "")


def read_varint(data: bytes, offset: int) -> tuple[int, int]:
    """One SQLite varint (as FTS5 stores its averages record); returns (value, new offset)."""
    value = 0
    for i in range(9):
        byte = data[offset + i]
        if i == 8:
            return (value << 8) | byte, offset + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, offset + i + 1
    raise AssertionError("unreachable")


def average_length(averages_record: bytes | None) -> float:
    """Tokens per row, from FTS5's averages record (row 1 of the ``_data`` table)."""
    if not averages_record:
        return 1.0
    rows, offset = read_varint(averages_record, 0)
    total, _ = read_varint(averages_record, offset)
    return total / rows if rows else 1.0


def estimate_matches(found: int, limit: int, reached: int, rows: int) -> float:
    """How many of ``rows`` rows match a phrase whose newest ``limit`` matches were looked
    for: exact when fewer were ``found``, else extrapolated from how many rows back
    (``reached``) they go."""
    if found < limit:
        return found
    return min(rows, found * rows / max(reached, 1))


def walked_words(terms: list[str], rarest: str, matching: dict[str, float], share: float,
                 rows: int, walk: float, dense: float) -> list[str]:
    """The words FTS5's AND should match over ``share`` of the ``rows``; the commonest are
    left out (to be checked on the notes it returns) when they have more than ``walk``
    matches there, as long as at least ``dense`` of the notes hold all those left out."""
    walked: list[str] = []
    holding_the_rest = 1.0  # the share of notes that hold every word left out so far
    for term in sorted(terms, key=lambda term: -matching[term]):
        density = matching[term] / max(rows, 1)
        if term != rarest and matching[term] * share >= walk and \
                holding_the_rest * density >= dense:
            holding_the_rest *= density
        else:
            walked.append(term)
    return walked

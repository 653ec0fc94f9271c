"""The offline router's former intent rules, kept only for comparison in bench/triage_eval.py.

Until the learned router (``bot.models.router``) replaced them, these hand-tuned pattern
tables were the offline router; they scored 99.8 % on the rows they were tuned on and much
less on messages written apart from them. Their pattern tables, one per intent and read top to
bottom, are in ``bench/legacy_intent_words.py``; this module applies them.

``intent_of(text)`` applies them, first that fits:

1. *urgent* — a row of ``URGENT`` matches (the words, or an emergency described without them:
   fire, a burst pipe, an accident, a break-in, a service down), unless a row of ``CALM`` says it
   is not one ("not urgent", "the emergency number", "fire drill", "is it urgent …?");
2. *social* — the whole message is greetings, thanks, goodbyes, small talk or acknowledgements
   (``SOCIAL``), with filler words and a name in between, and nothing else: no request;
3. *question* — a ``?``, or a row of ``QUESTION`` at the start of a sentence (after any
   greeting or thanks);
4. else *task*.

Patterns run on the folded text: lower case, accents dropped (``é`` → ``e``), ``’`` → ``'``.
They cover English, German, French, Spanish, Italian, Portuguese and Dutch.
``bench/triage_eval.py`` measures them on the same test split as the learned router.
"""

from __future__ import annotations

import unicodedata

from bench.legacy_intent_words import (
    CALM,
    CONNECTOR,
    FILLER,
    NAME,
    QUESTION,
    QUESTION_MARK,
    SENTENCE_START,
    SEPARATOR,
    SOCIAL,
    URGENT,
)


def fold(text: str) -> str:
    """Lower case without accents, one character for one, so positions match the original."""
    return "".join(_fold_char(char) for char in text)


def _fold_char(char: str) -> str:
    if char in "’‘`´":
        return "'"
    base = unicodedata.normalize("NFKD", char)[:1].lower()
    return base[:1] if base else char


def is_urgent(text: str) -> bool:
    """An URGENT row fits and no CALM row does."""
    folded = fold(text)
    return (any(p.search(folded) for p in URGENT)
            and not any(p.search(folded) for p in CALM))


def social_prefix(text: str) -> tuple[int, list[str]]:
    """How far the text is social from its start, and the kinds of social phrase found."""
    folded = fold(text)
    position, after_phrase = 0, False
    kinds: list[str] = []
    while True:
        gap = SEPARATOR.match(folded, position)
        start = gap.end() if gap else position
        if start >= len(folded):
            return len(folded), kinds
        found = _longest_social(folded, start)
        if found is not None:
            kinds.append(found[0])
            position, after_phrase = found[1], True
            continue
        filler = FILLER.match(folded, start)
        name = NAME.match(text, start)
        joined = gap is None or gap.group().strip() in {"", ","}
        if filler:
            position = filler.end()
        elif name and text[start].isupper() and after_phrase and joined:
            position, after_phrase = name.end(), False  # "Hi Sam", "Danke Anna"
        else:
            return position, kinds


def _longest_social(folded: str, start: int) -> tuple[str, int] | None:
    """The kind and end of the longest SOCIAL phrase at ``start``."""
    best: tuple[str, int] | None = None
    for kind, patterns in SOCIAL:
        for pattern in patterns:
            found = pattern.match(folded, start)
            if found and (best is None or found.end() > best[1]):
                best = (kind, found.end())
    return best


def social_kind(text: str) -> str | None:
    """"thanks", "goodbye", "greeting" or "ack" when the whole text is social; else None."""
    end, kinds = social_prefix(text)
    if end < len(text) or not kinds:
        return None
    for kind in ("thanks", "goodbye", "greeting"):
        if kind in kinds:
            return kind
    return "ack"


def is_question(text: str) -> bool:
    """A question mark, or a question word opening a sentence (after any greeting or thanks)."""
    if QUESTION_MARK.search(text):
        return True
    folded = fold(text)
    start, kinds = social_prefix(text)
    start = start if kinds else 0  # only a greeting or thanks is skipped, not a lone filler
    rest = CONNECTOR.sub("", folded[start:])
    openings = [folded, rest] + [folded[m.end():] for m in SENTENCE_START.finditer(folded)]
    return any(p.match(opening) for opening in openings for p in QUESTION)


def intent_of(text: str) -> str:
    """The first intent that fits: urgent, social, question, else task."""
    if is_urgent(text):
        return "urgent"
    if social_kind(text):
        return "social"
    if is_question(text):
        return "question"
    return "task"

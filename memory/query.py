"""Turn any user text into a safe FTS5 MATCH expression: every word becomes a quoted string.

FTS5 has a query language (``AND OR NOT NEAR``, ``*``, ``^``, ``:`` column filters,
parentheses, quotes); user text must never be read as that language, both for safety and
because a stray quote is a syntax error. So the text is split on white space, each chunk is
wrapped in double quotes (inner quotes doubled), and FTS5's own tokenizer turns each quoted
chunk into a phrase — ``foo-bar`` becomes the phrase ``foo bar``, ``NEAR`` is just a word.
Chunks with no letter or digit are dropped (an empty phrase makes an explicit ``AND`` match
nothing), and only the first few distinct chunks are kept, so 100 KB of text is one small query.
"""

from __future__ import annotations

import unicodedata

MAX_TERMS = 12
MAX_TERM_CHARS = 64


def clean_text(text: str) -> str:
    """Text SQLite can store: lone surrogates become U+FFFD, NUL characters are removed."""
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace").replace("\0", "")


def query_terms(text: str) -> list[str]:
    """The distinct quoted phrases of ``text``, at most MAX_TERMS, in order of appearance."""
    terms: list[str] = []
    seen: set[str] = set()
    for chunk in clean_text(text).split():
        chunk = chunk[:MAX_TERM_CHARS]
        if not any(_is_token_char(char) for char in chunk):
            continue
        key = chunk.casefold()
        if key in seen:
            continue
        seen.add(key)
        terms.append('"' + chunk.replace('"', '""') + '"')
        if len(terms) == MAX_TERMS:
            break
    return terms


def all_of(terms: list[str]) -> str:
    """Every phrase must match (implicit AND, which also ignores phrases that tokenize empty)."""
    return " ".join(terms)


def any_of(terms: list[str]) -> str:
    """Any phrase may match."""
    return " OR ".join(terms)


def _is_token_char(char: str) -> bool:
    """unicode61's default token characters: letters, numbers, private use (L*, N*, Co)."""
    category = unicodedata.category(char)
    return category[0] in "LN" or category == "Co"

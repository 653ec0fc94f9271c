"""Text from elsewhere made safe to show or log: one kind of line break, no hidden controls.

The one sanitiser for other people's words (names, messages, file names) and for error text
in logs: ``clean`` keeps what was written minus invisible controls and bidi overrides;
``one_line`` squeezes it to one short line.
"""

from __future__ import annotations

import re
import unicodedata

NAME_CHARS = 64  # a name longer than this is cut: it is a label, not a message

# Line breaks other than \n, and the controls that reorder what is shown (bidi overrides).
_BREAKS = re.compile("\r\n|[\r\u2028\u2029\x85\x0b\x0c]")
_HIDDEN = re.compile("[\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """Someone else's text with one kind of line break and no invisible controls."""
    text = _HIDDEN.sub("", _BREAKS.sub("\n", text))
    return "".join(ch for ch in text
                   if ch in "\n\t" or unicodedata.category(ch) not in ("Cc", "Cs"))


def one_line(text: str, limit: int = 200) -> str:
    """``text`` cleaned and squeezed to one short line: whitespace runs become one space."""
    line = " ".join(clean(text).split())
    return line if len(line) <= limit else line[:limit - 1] + "…"


def one_name(text: str) -> str:
    """A name as one short line: a label, cut at ``NAME_CHARS``."""
    return one_line(text, NAME_CHARS)

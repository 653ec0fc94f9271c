"""Text from elsewhere made safe to show or log: one kind of line break, no hidden controls.

The one sanitiser for other people's words (names, messages, file names) and for error text
in logs: ``clean`` keeps what was written minus invisible controls and bidi overrides;
``one_line`` squeezes it to one short line; ``escape_markdown`` shows it as typed where a
renderer would read Markdown.
"""

from __future__ import annotations

import html
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


# -- shown: how someone else's text is shown in each place ---------------------------------
# The places where other people's text is shown: the chat platforms read Markdown (Frontdesk's
# own renderer for Telegram, Discord's for Discord), a Telegram HTML part is HTML, the
# terminal shows text as it is, and a log line is one line.
PLACES = ("markdown", "markdown-code", "telegram-html", "discord", "terminal", "log")
# Every character a renderer (ours for Telegram, Discord's own) could read as Markdown; a
# backslash before one shows it as typed.
MARKUP_CHARS = "\\`*_{}[]()#+-.!|~<>@"
_MARKUP = re.compile("([" + re.escape(MARKUP_CHARS) + "])")


def shown(text: str, where: str) -> str:
    """``text`` (someone else's) as it must be put into ``where``, one of ``PLACES``: cleaned
    of controls and bidi overrides, then escaped so it shows literally (no link, no bold, no
    tag, no terminal sequence); a log line is squeezed to one line, and so is a label in
    ``markdown-code``: an inline code span, where neither Telegram nor Discord makes a link
    of a bare URL (its fence is a backtick run longer than any in the label, so a backtick of
    its own cannot close it)."""
    if where in ("markdown", "discord"):
        return _MARKUP.sub(r"\\\1", clean(text))
    if where == "markdown-code":  # a label in an inline code span, backticks included
        return code_span(one_line(text))
    if where == "telegram-html":
        return html.escape(clean(text), quote=True)
    if where == "terminal":
        return clean(text)
    if where == "log":
        return " ".join(clean(text).split())
    raise ValueError(f"no such place to show text: {where!r} (one of {', '.join(PLACES)})")

def code_span(label: str) -> str:
    """``label`` as inline code (CommonMark's code span, which our Telegram renderer and
    Discord both read). A label with a lone backtick is fenced by two, with a space inside
    each fence (the renderers drop those two spaces); a longer fence could open a code block
    on Discord, so a run of two or more backticks stays outside, escaped, between spans."""
    pieces = re.split("(``+)", label)
    return "".join(_MARKUP.sub(r"\\\1", piece) if piece.startswith("``")
                   else f"`` {piece} ``" if "`" in piece
                   else f"`{piece}`" if piece else "" for piece in pieces)


# In JSON inside a fenced code block these are written as \uXXXX escapes (the same value):
# a backtick could close the fence (Discord ends one at any three), the rest hide or reorder.
_JSON_UNSAFE = re.compile("[`\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def shown_json(text: str) -> str:
    """JSON text (from ``json.dumps``) made safe to show in a fenced code block: characters
    that could close the fence or hide and reorder text become ``\\uXXXX`` escapes, which
    only occur inside its strings, so it reads as the same value."""
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def chat_place(platform: str) -> str:
    """Where a chat message on ``platform`` shows text: Telegram and Discord read Markdown
    (ours and Discord's), the console shows it as it is."""
    return {"telegram": "markdown", "discord": "discord"}.get(platform, "terminal")



def escape_markdown(text: str) -> str:
    """Backslash every character that Markdown could read as markup: shown as typed."""
    return _MARKUP.sub(r"\\\1", text)

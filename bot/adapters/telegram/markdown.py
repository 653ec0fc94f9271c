"""Telegram's HTML from the model's Markdown: parse it into tokens, render them, escape text.

Pure functions: ``markdown_to_html`` and ``markdown_to_plain`` for a whole reply;
``parse_markdown`` gives the token stream (visible text and tags) that ``render`` turns into
HTML for ``parse_mode="HTML"`` and ``visible_text`` into what a reader sees, which is what
``bot.adapters.telegram.format`` cuts into parts. A backslash before a Markdown character
(``bot.config.text.MARKUP_CHARS``) shows it as typed.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from bot.config.text import MARKUP_CHARS


@dataclass(frozen=True)
class Open:
    """An opening tag; ``attrs`` is the escaped attribute text, e.g. ' href="…"'."""

    tag: str
    attrs: str = ""


@dataclass(frozen=True)
class Close:
    """A closing tag."""

    tag: str


Token = str | Open | Close  # a str is visible text, not yet escaped


def escape_html(text: str, *, quote: bool = False) -> str:
    """Escape &, < and > (and " inside attributes) as Telegram's HTML parse mode requires."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


def markdown_to_html(markdown: str) -> str:
    """The whole reply as Telegram HTML, unsplit."""
    return render(parse_markdown(markdown))


def markdown_to_plain(markdown: str) -> str:
    """The whole reply as the plain text a reader would see, unsplit."""
    return visible_text(parse_markdown(markdown))


def html_to_plain(markup: str) -> str:
    """The visible text of HTML made by this module (the plain-text fallback of a part)."""
    return html.unescape(re.sub(r"<[^>]*>", "", markup))


# -- Markdown -> tokens -------------------------------------------------------------------
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$")
_HEADING = re.compile(r"^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$")
_RULE = re.compile(r"^ {0,3}([-*_])(?:\s*\1){2,}\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_QUOTE = re.compile(r"^ {0,3}>\s?(.*)$")
_LINK = re.compile(r"\[((?:[^\[\]\\\n]|\\.)+)\]\(\s*<?([^\s()<>]+(?:\([^\s()]*\)[^\s()<>]*)*)>?"
                   r"(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<((?:https?|tg|mailto):[^\s<>]+)>")
_SAFE_URL = re.compile(r"(?:https?://|tg://|mailto:)\S+", re.IGNORECASE)
_PLAIN_RUN = re.compile(r"[^\\`\[<*_~]+")  # characters that cannot start inline markup
_ESCAPABLE = set(MARKUP_CHARS)  # escaped "<" and "@" too: notices keep them text
_DELIMITERS = (("**", "b"), ("__", "b"), ("~~", "s"), ("*", "i"), ("_", "i"))


def parse_markdown(markdown: str) -> list[Token]:
    """Markdown blocks to tokens: code fences, headings, lists, quotes, paragraphs."""
    text = re.sub(r"[\ud800-\udfff]", "\ufffd", markdown.replace("\r\n", "\n"))
    lines = text.split("\n")
    tokens: list[Token] = []
    i = 0
    while i < len(lines):
        if tokens:
            tokens.append("\n")
        line = lines[i]
        fence = _FENCE.match(line)
        closing = rf"^ {{0,3}}{fence.group(1)[0]}{{{len(fence.group(1))},}}\s*$" if fence else ""
        if fence and (i + 1 < len(lines) or any(re.match(closing, x) for x in lines[i + 1:])):
            lang, body = fence.group(2), []
            i += 1
            while i < len(lines) and not re.match(closing, lines[i]):
                body.append(lines[i])  # an unclosed fence runs to the end of the reply
                i += 1
            code = Open("code", f' class="language-{escape_html(lang, quote=True)}"') if lang \
                else None
            tokens += [Open("pre"), *([code] if code else []), "\n".join(body),
                       *([Close("code")] if code else []), Close("pre")]
        elif _QUOTE.match(line):
            quoted: list[Token] = []
            while i < len(lines) and (m := _QUOTE.match(lines[i])):
                quoted += (["\n"] if quoted else []) + _inline(m.group(1))
                i += 1
            tokens += [Open("blockquote"), *quoted, Close("blockquote")]
            continue
        elif _RULE.match(line):
            tokens.append("──────────")
        elif heading := _HEADING.match(line):
            tokens += [Open("b"), *_inline(heading.group(1)), Close("b")]
        elif bullet := _BULLET.match(line):
            tokens += [f"{bullet.group(1)}• ", *_inline(bullet.group(2))]
        else:
            tokens += _inline(line)
        i += 1
    return _merge_text(tokens)


def _inline(text: str, *, links: bool = True) -> list[Token]:
    """Inline Markdown of one line: code spans, links, bold, italic, strikethrough."""
    out: list[Token] = []
    buf: list[str] = []

    def emit(*items: Token) -> None:
        out.append("".join(buf))
        buf.clear()
        out.extend(items)

    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "\\" and i + 1 < len(text) and text[i + 1] in _ESCAPABLE:
            buf.append(text[i + 1])
            i += 2
            continue
        if ch == "`":
            run = len(text[i:]) - len(text[i:].lstrip("`"))
            end = _code_span_end(text, i, run)
            if end is None:
                buf.append("`" * run)
                i += run
                continue
            code = text[i + run:end]
            if len(code) > 2 and code[0] == code[-1] == " " and code.strip():
                code = code[1:-1]
            emit(Open("code"), code, Close("code"))
            i = end + run
            continue
        if links and ch in "[<" and (m := _LINK.match(text, i) or _AUTOLINK.match(text, i)):
            label, url = (m.group(1), m.group(2)) if m.re is _LINK else (m.group(1), m.group(1))
            if _SAFE_URL.fullmatch(url):
                emit(Open("a", f' href="{escape_html(url, quote=True)}"'),
                     *_inline(label, links=False), Close("a"))
            else:  # a relative or odd URL: keep it readable rather than make a bad link
                emit(*_inline(label, links=False), f" ({url})")
            i = m.end()
            continue
        for delim, tag in _DELIMITERS:
            if text.startswith(delim, i) and (end := _closer(text, i, delim)) is not None:
                emit(Open(tag), *_inline(text[i + len(delim):end], links=links), Close(tag))
                i = end + len(delim)
                break
        else:
            plain = _PLAIN_RUN.match(text, i)
            buf.append(plain.group(0) if plain else ch)
            i = plain.end() if plain else i + 1
    emit()
    return out


def _code_span_end(text: str, start: int, run: int) -> int | None:
    """Where the backtick run closing a code span opened at ``start`` begins, if any."""
    for m in re.finditer(r"`+", text[start + run:]):
        if len(m.group(0)) == run:
            return start + run + m.start()
    return None


def _closer(text: str, start: int, delim: str) -> int | None:
    """Where the delimiter closing an emphasis opened at ``start`` begins, if any."""
    single = len(delim) == 1
    first = start + len(delim)
    if first >= len(text) or text[first].isspace() or (single and text[first] == delim):
        return None
    if delim[0] == "_" and start > 0 and text[start - 1].isalnum():
        return None  # snake_case is not emphasis
    j = first
    while j < len(text):
        if text[j] == "\\" and j + 1 < len(text) and text[j + 1] in _ESCAPABLE:
            j += 2  # an escaped character is text: it never closes anything
            continue
        if text[j] == "`":
            run = len(text[j:]) - len(text[j:].lstrip("`"))
            end = _code_span_end(text, j, run)
            j = end + run if end is not None else j + run
            continue
        if text.startswith(delim, j) and j > first and not text[j - 1].isspace():
            if single and text.startswith(delim * 2, j):
                j += 2  # part of a double delimiter: not ours
                continue
            while not single and text.startswith(delim[0], j + len(delim)):
                j += 1  # "***x***": the closer is the end of the run
            after = j + len(delim)
            if not (delim[0] == "_" and after < len(text) and text[after].isalnum()):
                return j
        j += 1
    return None


def _merge_text(tokens: list[Token]) -> list[Token]:
    """Join neighbouring text tokens and drop empty ones."""
    merged: list[Token] = []
    for token in tokens:
        if isinstance(token, str) and merged and isinstance(merged[-1], str):
            merged[-1] += token
        elif token != "":
            merged.append(token)
    return merged


# -- tokens -> HTML ----------------------------------------------------------------------
def render(tokens: list[Token]) -> str:
    """Tokens as Telegram HTML, text escaped."""
    return "".join(escape_html(t) if isinstance(t, str) else
                   f"<{t.tag}{t.attrs}>" if isinstance(t, Open) else f"</{t.tag}>"
                   for t in tokens)


def visible_text(tokens: list[Token]) -> str:
    """What a reader sees of the tokens."""
    return "".join(t for t in tokens if isinstance(t, str))

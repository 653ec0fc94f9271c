"""Render the model's Markdown as Telegram HTML and cut it into parts Telegram accepts.

Pure functions: ``split_reply(markdown)`` gives a reply's parts, each as HTML (for
``parse_mode="HTML"``) and as plain text (the fallback when Telegram refuses the entities).
Length is counted as Telegram does: text after entity parsing, in UTF-16 units, ≤ 4,096. Cuts
fall on paragraph, line, then word boundaries; a tag open at a cut (a code block, bold text)
is closed at the end of the part and reopened in the next; parts are numbered "(1/3)".
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from dataclasses import dataclass

TELEGRAM_TEXT_LIMIT = 4096


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


@dataclass(frozen=True)
class ReplyPart:
    """One message of a reply: its HTML and the same visible text as plain text."""

    html: str
    plain: str


def utf16_len(text: str) -> int:
    """The length Telegram counts: UTF-16 code units (an emoji beyond the BMP counts 2)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def escape_html(text: str, *, quote: bool = False) -> str:
    """Escape &, < and > (and " inside attributes) as Telegram's HTML parse mode requires."""
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


def markdown_to_html(markdown: str) -> str:
    """The whole reply as Telegram HTML, unsplit."""
    return _render(_parse(markdown))


def markdown_to_plain(markdown: str) -> str:
    """The whole reply as the plain text a reader would see, unsplit."""
    return "".join(t for t in _parse(markdown) if isinstance(t, str))


def html_to_plain(html: str) -> str:
    """The visible text of HTML made by this module (the plain-text fallback of a part)."""
    text = re.sub(r"<[^>]*>", "", html)
    return text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace(
        "&amp;", "&")


def split_reply(markdown: str, limit: int = TELEGRAM_TEXT_LIMIT, *,
                number_parts: bool = True) -> list[ReplyPart]:
    """Render ``markdown`` and cut it into parts of at most ``limit`` visible UTF-16 units.

    Returns no parts for a reply with no visible text (Telegram refuses empty messages).
    """
    tokens = _parse(markdown)
    digits = 1
    while True:
        marker = utf16_len(f"\n({'9' * digits}/{'9' * digits})") if number_parts else 0
        pieces = [p for p in _cut(tokens, limit) if _visible(p).strip()]
        if len(pieces) > 1 and number_parts:
            pieces = [p for p in _cut(tokens, limit - marker) if _visible(p).strip()]
        if len(pieces) <= 1 or not number_parts or len(str(len(pieces))) <= digits:
            break
        digits = len(str(len(pieces)))
    if len(pieces) > 1 and number_parts:
        pieces = [[*p, f"\n({n}/{len(pieces)})"] for n, p in enumerate(pieces, 1)]
    return [ReplyPart(_render(p), _visible(p)) for p in pieces]


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
_PARAGRAPH = re.compile(r"\n(?:[ \t]*\n)+")  # blank lines; the next line keeps its indent
_PLAIN_RUN = re.compile(r"[^\\`\[<*_~]+")  # characters that cannot start inline markup
_ESCAPABLE = set("\\`*_{}[]()#+-.!|~<>@")  # escaped "<" and "@": notices keep them text
_DELIMITERS = (("**", "b"), ("__", "b"), ("~~", "s"), ("*", "i"), ("_", "i"))


def _parse(markdown: str) -> list[Token]:
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


# -- tokens -> HTML, and cutting ----------------------------------------------------------
def _render(tokens: list[Token]) -> str:
    return "".join(escape_html(t) if isinstance(t, str) else
                   f"<{t.tag}{t.attrs}>" if isinstance(t, Open) else f"</{t.tag}>"
                   for t in tokens)


def _visible(tokens: list[Token]) -> str:
    return "".join(t for t in tokens if isinstance(t, str))


def _cut(tokens: list[Token], budget: int) -> list[list[Token]]:
    """Cut the token stream into pieces of at most ``budget`` visible UTF-16 units."""
    if budget < 16:
        raise ValueError(f"a part of {budget} characters is too small to cut into")
    visible = _visible(tokens)
    block_edges = _block_edges(tokens)
    # units[i]: UTF-16 units of visible[:i], so any span's length is one subtraction
    units = [0, *itertools.accumulate(2 if ord(ch) > 0xFFFF else 1 for ch in visible)]
    spans: list[tuple[int, int]] = []
    pos = 0
    while units[-1] - units[pos] > budget:
        end = bisect.bisect_right(units, units[pos] + budget) - 1
        cut, resume = _best_break(visible, pos, end, block_edges)
        spans.append((pos, cut))
        pos = resume
    spans.append((pos, len(visible)))
    index = _TokenIndex(tokens)
    return [index.slice(start, stop) for start, stop in spans]


def _block_edges(tokens: list[Token]) -> set[int]:
    """Visible offsets where a code block or quote starts or ends: good places to cut."""
    edges, offset = set(), 0
    for token in tokens:
        if isinstance(token, str):
            offset += len(token)
        elif token.tag in ("pre", "blockquote"):
            edges.add(offset)
    return edges


def _best_break(text: str, start: int, end: int, block_edges: set[int]) -> tuple[int, int]:
    """Where to end a part that may run to ``end``, and where the next one starts.

    The best kind of break wins if it falls in the part's second half: a paragraph or block
    edge, then a line end, then a space; failing that, the latest break of any kind; failing
    that, a hard cut. The separator belongs to neither part; a code line keeps its indentation.
    """
    if end >= len(text):
        return end, end
    blocks = [(start + m.start(), start + m.end())  # the char at ``end`` may be a separator
              for m in _PARAGRAPH.finditer(text[start:end + 1])]
    blocks += [(e, e) for e in block_edges if start < e <= end]

    def paragraph(lo: int) -> tuple[int, int] | None:
        return max(((c, r) for c, r in blocks if lo <= c), default=None)

    def line(lo: int) -> tuple[int, int] | None:
        cut = text.rfind("\n", lo, end + 1)
        return (cut, cut + 1) if cut != -1 else None

    def space(lo: int) -> tuple[int, int] | None:
        cut = max(text.rfind(" ", lo, end + 1), text.rfind("\t", lo, end + 1))
        if cut == -1:
            return None
        resume = cut + 1
        while resume < len(text) and text[resume] in " \t":
            resume += 1
        while cut > lo and text[cut - 1] in " \t":
            cut -= 1
        return cut, resume

    for lo in (start + (end - start) // 2, start + 1):
        for kind in (paragraph, line, space):
            if found := kind(lo):
                return found
    cut = end
    while cut > start + 1 and _joins(text[cut - 1], text[cut]):
        cut -= 1  # keep an emoji sequence or a letter and its accents together
    return cut, cut


def _joins(before: str, after: str) -> bool:
    """True when cutting between these two characters would break one visible character."""
    code = ord(after)
    return (unicodedata.category(after) in ("Mn", "Me", "Mc") or before == "\u200d"
            or code == 0x200D or 0xFE00 <= code <= 0xFE0F or 0x1F3FB <= code <= 0x1F3FF
            or 0xE0020 <= code <= 0xE007F
            or (0x1F1E6 <= ord(before) <= 0x1F1FF and 0x1F1E6 <= code <= 0x1F1FF))


class _TokenIndex:
    """Where each token starts and which tags are open there, to slice without rescanning."""

    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.offsets: list[int] = []  # visible offset where each token starts
        self.stacks: list[tuple[Open, ...]] = []  # tags open before each token
        offset, stack = 0, tuple[Open, ...]()
        for token in tokens:
            self.offsets.append(offset)
            self.stacks.append(stack)
            if isinstance(token, str):
                offset += len(token)
            elif isinstance(token, Open):
                stack = (*stack, token)
            else:
                stack = stack[:-1]

    def slice(self, start: int, stop: int) -> list[Token]:
        """The tokens of visible range [start, stop), tags open at the edges closed/reopened."""
        first = max(0, bisect.bisect_left(self.offsets, start) - 1)
        out: list[Token] = []
        stack = list(self.stacks[first]) if self.tokens else []
        offset = self.offsets[first] if self.tokens else 0
        for token in self.tokens[first:]:
            if isinstance(token, str):
                lo, hi = max(start, offset), min(stop, offset + len(token))
                if lo < hi:
                    if not out:
                        out.extend(stack)  # reopen what was open where this piece starts
                    out.append(token[lo - offset:hi - offset])
                offset += len(token)
                if offset >= stop:
                    break
            elif isinstance(token, Open):
                stack.append(token)
                if out:
                    out.append(token)
            else:
                stack.pop()
                if out:
                    out.append(token)
        out.extend(Close(t.tag) for t in reversed(stack))
        return _drop_empty_tags(out)


def _drop_empty_tags(tokens: list[Token]) -> list[Token]:
    """Remove tag pairs that enclose no text (a cut can leave them)."""
    out: list[Token] = []
    for token in tokens:
        if isinstance(token, Close) and out and isinstance(out[-1], Open) \
                and out[-1].tag == token.tag:
            out.pop()
        else:
            out.append(token)
    return out

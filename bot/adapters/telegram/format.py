"""Cut a reply into the parts Telegram accepts, each as HTML and as plain text.

Pure functions: ``split_reply(markdown)`` gives a reply's parts, each as HTML (for
``parse_mode="HTML"``) and as plain text (the fallback when Telegram refuses the entities);
the Markdown is read by ``bot.adapters.telegram.markdown``. Length is counted as Telegram
does: text after entity parsing, in UTF-16 units, ≤ 4,096. Cuts fall on paragraph, line, then
word boundaries; a tag open at a cut (a code block, bold text) is closed at the end of the
part and reopened in the next; parts are numbered "(1/3)".
"""

from __future__ import annotations

import bisect
import itertools
import re
import unicodedata
from dataclasses import dataclass

from bot.adapters.telegram.markdown import Close, Open, Token, parse_markdown, render, visible_text

TELEGRAM_TEXT_LIMIT = 4096
_PARAGRAPH = re.compile(r"\n(?:[ \t]*\n)+")  # blank lines; the next line keeps its indent


@dataclass(frozen=True)
class ReplyPart:
    """One message of a reply: its HTML and the same visible text as plain text."""

    html: str
    plain: str


def utf16_len(text: str) -> int:
    """The length Telegram counts: UTF-16 code units (an emoji beyond the BMP counts 2)."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def split_reply(markdown: str, limit: int = TELEGRAM_TEXT_LIMIT, *,
                number_parts: bool = True) -> list[ReplyPart]:
    """Render ``markdown`` and cut it into parts of at most ``limit`` visible UTF-16 units.

    Returns no parts for a reply with no visible text (Telegram refuses empty messages).
    """
    tokens = parse_markdown(markdown)
    digits = 1
    while True:
        marker = utf16_len(f"\n({'9' * digits}/{'9' * digits})") if number_parts else 0
        pieces = [p for p in _cut(tokens, limit) if visible_text(p).strip()]
        if len(pieces) > 1 and number_parts:
            pieces = [p for p in _cut(tokens, limit - marker) if visible_text(p).strip()]
        if len(pieces) <= 1 or not number_parts or len(str(len(pieces))) <= digits:
            break
        digits = len(str(len(pieces)))
    if len(pieces) > 1 and number_parts:
        pieces = [[*p, f"\n({n}/{len(pieces)})"] for n, p in enumerate(pieces, 1)]
    return [ReplyPart(render(p), visible_text(p)) for p in pieces]


# -- cutting ---------------------------------------------------------------------------
def _cut(tokens: list[Token], budget: int) -> list[list[Token]]:
    """Cut the token stream into pieces of at most ``budget`` visible UTF-16 units."""
    if budget < 16:
        raise ValueError(f"a part of {budget} characters is too small to cut into")
    visible = visible_text(tokens)
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

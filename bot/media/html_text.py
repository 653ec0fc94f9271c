"""The visible text of an HTML page, with the standard library's ``html.parser``.

Scripts, styles and the head are dropped and each block element starts a line, which is all
"the text of a web page" needs. ``bot.media.documents`` imports this for HTML files only.
``visible_text_upto`` feeds the page in pieces and stops once it has more visible text than
it needs, so a huge page costs no more than its beginning.
"""

from __future__ import annotations

from html.parser import HTMLParser

_SKIPPED_TAGS = frozenset({"script", "style", "head", "template", "noscript"})
_BLOCK_TAGS = frozenset({"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6",
                         "section", "article", "table", "ul", "ol", "pre", "blockquote"})


class _TextOfHtml(HTMLParser):
    """Collects the visible text, a line break around each block element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _SKIPPED_TAGS:
            self.skipping += 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in _SKIPPED_TAGS and self.skipping:
            self.skipping -= 1
        elif tag in _BLOCK_TAGS:
            self.parts.append("\n")

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(data)


PIECE_CHARS = 64 * 1024


def visible_text(html: str) -> str:
    """The visible text of an HTML page, one block a line."""
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    return _lines(parser.parts)


def visible_text_upto(html: str, limit: int) -> tuple[str, bool]:
    """The visible text, read until it is longer than ``limit`` characters; and whether the
    whole page was read."""
    parser = _TextOfHtml()
    next_check = limit
    for start in range(0, len(html), PIECE_CHARS):
        parser.feed(html[start:start + PIECE_CHARS])
        collected = sum(len(part) for part in parser.parts)
        if collected > next_check:  # whitespace shrinks; checked at doubling sizes only
            text = _lines(parser.parts)
            if len(text) > limit and start + PIECE_CHARS < len(html):
                return text, False
            next_check = 2 * collected
    parser.close()
    return _lines(parser.parts), True


def _lines(parts: list[str]) -> str:
    lines = (" ".join(line.split()) for line in "".join(parts).splitlines())
    return "\n".join(line for line in lines if line)

"""Cut a reply into Discord messages: at most 2,000 characters each, numbered, code intact.

Discord refuses a message over 2,000 characters (it counts characters, i.e. code points,
not bytes). A long reply is cut at a paragraph break if one is near the end of the room,
else at a line break, else at a space, else mid-word; a fenced code block that spans a cut is
closed at the end of one part and re-opened (same language) at the start of the next, so
every part renders on its own. A quote line (``> ``) cut in the middle goes on quoted in the
next part, and a cut never parts a backslash from the character it escapes, so the quoted,
escaped words of a notice stay quoted and escaped. Parts are numbered ``(1/3)`` on their first
line. Pure functions, no discord.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DISCORD_MESSAGE_LIMIT = 2000
FENCE = "```"
CLOSING_FENCE = "\n" + FENCE
QUOTE = "> "
MIN_LIMIT = 100  # room for a number, a re-opened fence, a closing fence and some text
_LANGUAGE = re.compile(r"[A-Za-z0-9_+#.\-]{1,20}")


@dataclass(frozen=True)
class ReplyPart:
    """One part: a slice of the reply, plus the fences the cut made necessary."""

    body: str
    reopen: str = ""  # the fence header (e.g. "```python") re-opened before the body
    close: bool = False  # whether a fence is closed after the body

    def render(self, number: int, total: int) -> str:
        """The message text; a lone part carries no number."""
        marker = f"({number}/{total})\n" if total > 1 else ""
        head = f"{self.reopen}\n" if self.reopen else ""
        return marker + head + self.body + (CLOSING_FENCE if self.close else "")


def split_reply(text: str, limit: int = DISCORD_MESSAGE_LIMIT) -> list[str]:
    """The messages to send for ``text``: each at most ``limit`` characters; [] if blank."""
    if limit < MIN_LIMIT:
        raise ValueError(f"limit must be at least {MIN_LIMIT} characters, not {limit}.")
    reply = text.strip("\n").rstrip()
    if not reply.strip():
        return []
    if len(reply) <= limit:
        return [reply]
    digits = 1
    while True:  # the numbers' width depends on how many parts there are
        parts = plan_parts(reply, limit - len(f"({'9' * digits}/{'9' * digits})\n"))
        if len(str(len(parts))) <= digits:
            return [part.render(i, len(parts)) for i, part in enumerate(parts, 1)]
        digits = len(str(len(parts)))


def plan_parts(text: str, room: int) -> list[ReplyPart]:
    """Cut ``text`` into parts whose rendering (without a number) fits in ``room``."""
    parts: list[ReplyPart] = []
    rest, reopen = text, ""
    while rest:
        space = room - (len(reopen) + 1 if reopen else 0)
        if len(rest) <= space:
            still_open = open_fence_after(reopen, rest)
            if still_open is None or len(rest) + len(CLOSING_FENCE) <= space:
                parts.append(ReplyPart(rest, reopen, close=still_open is not None))
                break
        cut = cut_point(rest, space - len(CLOSING_FENCE))
        chunk = rest[:cut].rstrip() or rest[:cut]
        still_open = open_fence_after(reopen, chunk)
        parts.append(ReplyPart(chunk, reopen, close=still_open is not None))
        reopen = still_open or ""
        line_start = rest.rfind("\n", 0, cut) + 1
        mid_line = 0 < cut < len(rest) and rest[cut] != "\n" and rest[cut - 1] != "\n"
        quoted = mid_line and still_open is None and rest.startswith(QUOTE, line_start)
        rest = (QUOTE if quoted else "") + rest[cut:].lstrip("\n")
        if not rest.strip():
            break
    return parts


def cut_point(text: str, window: int) -> int:
    """Where to cut ``text`` so the first piece (right-stripped) fits in ``window``."""
    if len(text) <= window:
        return len(text)
    half = window // 2
    paragraph = text.rfind("\n\n", 0, window + 1)
    if paragraph >= half:
        return paragraph
    line = text.rfind("\n", 0, window + 1)
    space = text.rfind(" ", 0, window + 1)
    while space > 0 and text[space - 1] == ">" and (space == 1 or text[space - 2] == "\n"):
        space = text.rfind(" ", 0, space)  # the space of a quote's "> " is not a break
    for candidate, cut in ((line, line), (space, space + 1)):
        if candidate >= half:
            return cut
    for candidate, cut in ((line, line), (space, space + 1)):
        if candidate > 0:
            return cut
    hard = window
    while hard > 1 and ((text[hard - 1] == "`" and text[hard] == "`") or escapes(text, hard)):
        hard -= 1  # never split a fence marker, nor an escape from what it escapes
    return hard if hard > 1 else window


def escapes(text: str, end: int) -> bool:
    """Whether ``text[:end]`` ends in a backslash that escapes ``text[end]``."""
    run = len(text[:end]) - len(text[:end].rstrip("\\"))
    return run % 2 == 1


def open_fence_after(open_header: str, chunk: str) -> str | None:
    """The fence header still open after ``chunk`` (None if none), starting from ``open_header``.

    Discord ends a code block at the next triple backtick wherever it is, so a line with an
    odd number of them toggles the state; the header keeps the language for re-opening.
    """
    state = open_header or None
    for line in chunk.split("\n"):
        if line.count(FENCE) % 2 == 0:
            continue
        if state is None:
            language = line[line.rfind(FENCE) + len(FENCE):].strip()
            state = FENCE + language if _LANGUAGE.fullmatch(language) else FENCE
        else:
            state = None
    return state

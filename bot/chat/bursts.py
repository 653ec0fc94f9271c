"""One turn for a burst: a person's messages in one chat that come close together, answered once.

People type a thought over several lines. Each text from one person in one chat that arrives
within ``FRONTDESK_MERGE_WINDOW`` seconds of the one before joins the same *burst*, and the
burst is answered as one turn: the model sees the lines in order, as one message. A burst
closes after ``MAX_MESSAGES`` lines, ``MAX_WAIT_S`` seconds after its first line, or when the
same person sends something that keeps its own path (a command, a file): that is answered
after the lines before it, and lines after it start a new burst. A line that arrives while
the chat's turn is running waits for the chat; the lines waiting then are the next turn.

A line alone in its burst is not held: its turn starts at once (``left`` is 0), and
``bot.chat.turns`` cancels that turn when a second line comes while it has done nothing the
chat could see, putting the line back (``put_back``) to wait with its burst. Only a burst of
two lines or more waits for the person to pause.

``bot.chat.turns`` tells ``Bursts`` of every allowed message once it is in the inbox
(``arrived``, so nothing waits before it is recorded), waits for its burst to settle
(``settled``), then, under the chat's lock, takes the bursts due in order (``due``) and
answers each. The
waiting lines live only in memory: a crash loses nothing, since each is in the inbox, and
``bot.chat.backlog`` groups what a crash left open the same way at the next start (a burst a
turn took up is recorded under its run id before the run starts, so it is found whole).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from bot.chat.commands import parse
from bot.messages import IncomingMessage

MAX_MESSAGES = 10  # lines in one burst
MAX_WAIT_S = 5.0  # after a burst's first line, it is answered whatever still comes
MAX_CHARS = 16_000  # a burst stays a message the gateway reads (its MAX_MESSAGE_CHARS)
Key = tuple[str, str, str]  # platform, chat, person


def key_of(msg: IncomingMessage) -> Key:
    """Whose burst: one person in one chat."""
    return msg.platform, msg.chat_id, msg.user_id


def mergeable(msg: IncomingMessage) -> bool:
    """A plain text joins a burst; a command or a file keeps its own path."""
    return bool(msg.text.strip()) and not msg.attachments and parse(msg.text) is None


def merged(burst: Sequence[IncomingMessage]) -> IncomingMessage:
    """The one message a turn answers: the first line's, with every line's text in order.

    A burst of two lines or more gets an id of its own (the first line's, marked ``+``), so
    its run is not the run a turn for the first line alone may have started (and been
    cancelled: ``bot.chat.turns``); the same lines give the same id after any restart."""
    if len(burst) == 1:
        return burst[0]
    return replace(burst[0], message_id=burst[0].message_id + "+",
                   text="\n".join(msg.text for msg in burst))


@dataclass(frozen=True)
class Line:
    """A waiting line: its message, when it came, its place among its person's arrivals, and
    the burst it belongs to."""

    message: IncomingMessage
    at: float
    seq: int
    burst: int


class Bursts:
    """The lines waiting to be answered, per person and chat (in memory; the inbox has them)."""

    def __init__(self, window: float, *, clock: Callable[[], float] = time.monotonic,
                 max_messages: int = MAX_MESSAGES, max_wait: float = MAX_WAIT_S) -> None:
        self.window, self.clock = window, clock
        self.max_messages, self.max_wait = max_messages, max_wait
        self._lines: dict[Key, list[Line]] = {}
        self._seq: dict[Key, int] = {}  # arrivals so far, per person and chat
        self._burst: dict[Key, int] = {}  # the number of the burst a new line joins
        self._cuts: dict[tuple[Key, str], int] = {}  # an own-path message's place
        self._changed: dict[Key, asyncio.Event] = {}
        self._taken: dict[tuple[Key, str], Line] = {}  # lines taken, process not yet seen

    @property
    def on(self) -> bool:
        """Merging is on (``FRONTDESK_MERGE_WINDOW`` above 0)."""
        return self.window > 0

    def arrived(self, msg: IncomingMessage) -> None:
        """An allowed message is in the inbox: a line joins its burst, anything else closes it."""
        key = key_of(msg)
        if not self.on or self.holds(key, msg.message_id):
            return  # held already: its first recording was rolled back (a full disk's batch)
        seq = self._seq[key] = self._seq.get(key, 0) + 1
        burst = self._burst.setdefault(key, 0)
        if not mergeable(msg):
            self._cuts[(key, msg.message_id)] = seq
            self._burst[key] = burst + 1
        else:
            lines = self._lines.setdefault(key, [])
            lines.append(Line(msg, self.clock(), seq, burst))
            if sum(1 for line in lines if line.burst == burst) >= self.max_messages:
                self._burst[key] = burst + 1  # full: the next line starts another
        if (changed := self._changed.pop(key, None)) is not None:
            changed.set()

    def left(self, msg: IncomingMessage) -> float:
        """Seconds until ``msg``'s burst is answered: 0 when it is alone in its burst (a lone
        line starts at once), closed (a command or a file came after it, or it is full), quiet
        for the window, waited on long enough, or not waiting at all."""
        key = key_of(msg)
        line = self._line(key, msg.message_id)
        if line is None or line.burst < self._burst.get(key, 0):
            return 0.0
        burst = [other for other in self._lines[key] if other.burst == line.burst]
        if len(burst) == 1:
            return 0.0
        left = min(burst[-1].at + self.window, burst[0].at + self.max_wait) - self.clock()
        return max(0.0, left)

    async def settled(self, msg: IncomingMessage) -> None:
        """Return once ``msg``'s burst may be answered (``left`` is 0)."""
        key = key_of(msg)
        while (left := self.left(msg)) > 0:
            changed = self._changed.setdefault(key, asyncio.Event())
            try:
                async with asyncio.timeout(left):
                    await changed.wait()
            except TimeoutError:
                pass

    def open_alone(self, msg: IncomingMessage, burst: Sequence[IncomingMessage]) -> bool:
        """Whether ``burst``, just taken, is ``msg`` alone in a burst still open to more
        lines: its turn may be cancelled by the next line (``bot.chat.turns``)."""
        key = key_of(msg)
        line = self._taken.get((key, msg.message_id))
        return (self.on and len(burst) == 1 and burst[0] is msg and line is not None
                and line.burst == self._burst.get(key, 0) and not self._lines.get(key))

    def holds(self, key: Key, message_id: str) -> bool:
        """Whether a line (or an own-path message) with this id is waiting or taken."""
        return (self._line(key, message_id) is not None or (key, message_id) in self._taken
                or (key, message_id) in self._cuts)

    def arrived_at(self, msg: IncomingMessage) -> float:
        """When a taken line arrived (now, for a message ``arrived`` never saw)."""
        line = self._taken.get((key_of(msg), msg.message_id))
        return self.clock() if line is None else line.at

    def put_back(self, msg: IncomingMessage) -> None:
        """A taken line whose turn was cancelled waits again, first of its person's lines,
        in the burst a new line joins (its own arrival time kept: ``MAX_WAIT_S`` counts
        from it)."""
        key = key_of(msg)
        line = self._taken.pop((key, msg.message_id))
        lines = self._lines.setdefault(key, [])
        lines.insert(0, replace(line, burst=self._burst.get(key, 0)))

    def due(self, msg: IncomingMessage) -> Iterator[list[IncomingMessage]]:
        """The bursts ``msg``'s process answers, in order (its chat's lock held): the oldest
        waiting bursts of its person until its own is taken, each taken only when its turn
        comes (lines that arrive meanwhile still join), or none when an earlier process took
        it. A message that keeps its own path comes alone, after the lines before it."""
        key = key_of(msg)
        done = (key, msg.message_id)
        cut = self._cuts.pop(done, None)
        try:
            if cut is not None:
                while (lines := self._lines.get(key)) and lines[0].seq < cut:
                    yield self._take(key, before=cut)
                yield [msg]
            elif self._line(key, msg.message_id) is not None:
                while self._line(key, msg.message_id) is not None:
                    yield self._take(key)
                self._taken.pop(done, None)
            elif done in self._taken:
                self._taken.pop(done)  # answered with an earlier line of its burst
            else:
                yield [msg]  # merging off, or a message ``arrived`` never saw
        finally:
            self._forget(key)

    def _forget(self, key: Key) -> None:
        """Drop a person's state once nothing of theirs waits or is taken: a burst counts
        only within what is waiting, so starting again from 0 changes nothing, and the
        tables hold the people writing now rather than everyone who ever wrote. (``_taken``
        and ``_cuts`` hold only messages being answered now: a short scan.)"""
        if key in self._lines or any(k == key for k, _ in self._taken) \
                or any(k == key for k, _ in self._cuts):
            return
        self._seq.pop(key, None)
        self._burst.pop(key, None)
        if (changed := self._changed.pop(key, None)) is not None:
            changed.set()  # a waiter looks again, and finds nothing left to wait for

    def __len__(self) -> int:
        """How many people (per chat) have state kept now."""
        return len(self._seq.keys() | self._lines.keys() | self._changed.keys())

    def _take(self, key: Key, before: int | None = None) -> list[IncomingMessage]:
        """Take the oldest waiting burst of a person (its lines before ``before`` only)."""
        lines = self._lines[key]
        first = lines[0]
        taken: list[Line] = []
        chars = 0
        for line in lines:
            if line.burst != first.burst or (before is not None and line.seq > before) \
                    or len(taken) >= self.max_messages \
                    or (taken and chars + len(line.message.text) + 1 > MAX_CHARS):
                break
            taken.append(line)
            chars += len(line.message.text) + 1
        del lines[:len(taken)]
        self._taken.update(((key, line.message.message_id), line) for line in taken)
        if not lines:
            del self._lines[key]
        return [line.message for line in taken]

    def _line(self, key: Key, message_id: str) -> Line | None:
        return next((line for line in self._lines.get(key, ())
                     if line.message.message_id == message_id), None)

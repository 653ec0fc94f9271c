"""Live replies: an answer shown in the chat while the model writes it, then delivered once.

The gateway opens ``LiveReplies.showing(...)`` around a message's run and passes the
``LiveReply`` it yields to the run (``Runs.start(..., live=reply)``); the run's answer streams
into it (``graphs.live``), and it shows it through the platform's ``LiveAdapter``:

- ``draft`` (Telegram private chats): the text as the chat's draft, an ephemeral preview;
  the final text is then the outbox's ordinary message. A refused draft falls back to edits.
- ``edit`` (Telegram groups, Discord): a message is sent once there is a sentence or so, then
  edited as it grows; past the platform's length a new message continues it. Each is recorded
  in ``live_messages`` (``bot.delivery.shown``) as soon as the platform took it, and the
  outbox delivers the final text's parts as edits of those messages: that edit *is* the
  delivery, so the final text is sent once, crash or not.

The pace is the chat's and the bot's: at most one write per ``interval`` seconds in that
chat (the final delivery is never held back by it), a write only when the bot's overall pace
has a slot free for it now (``bot.delivery.pace``: else this update is dropped, and the next
shows the text so far), never a write that changes nothing, a flood answer's
``retry_after`` kept for every write to the chat (the adapter keeps it for its sends too), and
after ``MAX_FLOODS`` flood answers in one reply nothing more is shown live. A partial text
always ends with "…" (``partial``), and a final text never does (``settled``), so a partial
message never looks finished. The run's trace gets ``first_visible`` when the answer was
first shown, through the observer of the node that took it (``watch``; the model's
``first_token`` event says when its text began).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from bot.adapters.base import Adapter, LiveAdapter
from bot.delivery.pace import WritePace
from bot.delivery.shown import LiveMessages
from bot.messages import Flooded, LiveRefused
from graphs.events import EventKind
from graphs.graph import Observer

log = logging.getLogger(__name__)

PARTIAL_MARK = "\u2026"  # "…": the end of every partial text, and of no final one
MAX_FLOODS = 3  # flood answers in one reply after which nothing more is shown live
FIRST_PART_CHARS = 40  # an edit-mode reply shows once it has this much, or a sentence
SENTENCE_END = re.compile(r"[.!?:;\n]\s")
PACE_KEPT = 256  # chats whose pace is kept before the ones past their wait are dropped


def partial(text: str) -> str:
    """A text still being written, as shown: ending with " …" so it never looks final."""
    return f"{text.rstrip()} {PARTIAL_MARK}"


def settled(text: str) -> str:
    """A final text as delivered: never ending with "…" (that mark belongs to partial texts),
    so a trailing "…" of the model's own becomes "..."."""
    stripped = text.rstrip()
    if stripped.endswith(PARTIAL_MARK):
        return stripped[:-1].rstrip(PARTIAL_MARK) + "..."
    return text


def worth_a_message(text: str) -> bool:
    """A sentence or so: enough to send as the first message of a reply being edited."""
    return len(text.strip()) >= FIRST_PART_CHARS or bool(SENTENCE_END.search(text + " "))


def pieces(text: str, limit: int) -> list[str]:
    """The text cut into messages of at most ``limit`` characters with the mark, at a space
    or line break when there is one in the last quarter of a piece."""
    room = max(8, limit - 2)
    cut: list[str] = []
    while len(text) > room:
        at = max(text.rfind("\n", 0, room), text.rfind(" ", 0, room))
        at = at if at > room * 3 // 4 else room
        cut.append(text[:at])
        text = text[at:].lstrip()
    return [*cut, text]


def draft_id_of(key: str) -> int:
    """A reply's draft id: non-zero, the same for the same reply key (so a restart's draft
    replaces the one before)."""
    return int(hashlib.sha256(key.encode()).hexdigest()[:7], 16) or 1


class LiveReplies:
    """Opens live replies and keeps each chat's pace (last write, flood wait)."""

    def __init__(self, adapter_of: Callable[[str], Adapter | None], shown: LiveMessages, *,
                 on: bool = True, interval: float = 1.0, pace: WritePace | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.adapter_of, self.shown = adapter_of, shown
        self.on = on
        self.interval = interval
        self.pace = pace  # all of the bot's writes to a platform (None: no overall pace)
        self.clock = clock
        self.last_write: dict[tuple[str, str], float] = {}
        self.not_before: dict[tuple[str, str], float] = {}  # a flood answer's wait, per chat

    def open(self, platform: str, chat_id: str, key: str, private: bool) -> LiveReply | None:
        """A live reply for one answer, or None when nothing can be shown before it."""
        adapter = self.adapter_of(platform)
        if not self.on or not isinstance(adapter, LiveAdapter):
            return None
        mode = adapter.live_mode(chat_id, private)
        if mode is None:
            return None
        return LiveReply(self, adapter, chat_id, key, mode,
                         self.shown.of(platform, chat_id, key))

    @contextlib.asynccontextmanager
    async def showing(self, platform: str, chat_id: str, key: str,
                      private: bool) -> AsyncIterator[LiveReply | None]:
        """The live reply a run inside the block streams its answer to (None: nothing can be
        shown live); on leaving, live updates stop (one in flight finishes) before the final
        delivery goes out."""
        reply = self.open(platform, chat_id, key, private)
        try:
            yield reply
        finally:
            if reply is not None:
                await reply.close()

    def wait_before_write(self, where: tuple[str, str]) -> float:
        """Seconds until this chat may get its next live write."""
        now = self.clock()
        due = max(self.last_write.get(where, -1e9) + self.interval,
                  self.not_before.get(where, -1e9))
        return max(0.0, due - now)

    def forget_past(self) -> None:
        """Past ``PACE_KEPT`` chats, drop the pace of those whose wait is over: a chat absent
        from both tables may write at once, which is what an entry past its time says too."""
        if len(self.last_write) + len(self.not_before) <= PACE_KEPT:
            return
        now = self.clock()
        self.last_write = {where: at for where, at in self.last_write.items()
                           if at + self.interval > now}
        self.not_before = {where: at for where, at in self.not_before.items() if at > now}

    def may_write(self, platform: str) -> bool:
        """Whether the bot's overall pace has a slot free now (then taken) for a live write."""
        return self.pace is None or self.pace.try_take(platform)


class LiveReply:
    """One answer shown as it grows; called with the text so far (a ``graphs.live`` sink,
    a ``WatchedSink``: its ``first_visible`` goes to the observer of the node that took it)."""

    def __init__(self, owner: LiveReplies, adapter: LiveAdapter, chat_id: str, key: str,
                 mode: str, messages: dict[int, str]) -> None:
        self.owner = owner
        self.adapter = adapter
        self.chat_id = chat_id
        self.key = key
        self.mode = "edit" if messages else mode  # a restart goes on editing what it showed
        self.where = (adapter.platform, chat_id)
        self.messages = messages  # part number -> platform message id, shown live
        self.showing: dict[int, str] = {}  # part number -> the text it shows now
        self.latest = ""
        self.floods = 0
        self.updates = 0
        self.observer: Observer | None = None
        self.first_text_at: float | None = None
        self._changed = asyncio.Event()
        self._closing = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def __call__(self, text: str) -> None:
        """The answer so far ("" takes back what was shown: not the answer after all)."""
        if self._closing.is_set():
            return
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._pump())
        if text and self.first_text_at is None:
            self.first_text_at = time.monotonic()
        self.latest = text
        self._changed.set()

    def watch(self, observer: Observer) -> None:
        """The node streaming the answer: its observer gets ``first_visible``."""
        self.observer = observer

    @property
    def live(self) -> bool:
        """Whether more may be shown (not after ``MAX_FLOODS`` flood answers)."""
        return self.floods < MAX_FLOODS

    async def close(self) -> None:
        """No more updates: the final delivery follows. One write in flight finishes first."""
        self._closing.set()
        self._changed.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await self._task

    async def _pump(self) -> None:
        """Show the latest text at the chat's pace until closed."""
        while self.live:
            await self._changed.wait()
            self._changed.clear()
            if self._closing.is_set():
                return
            wait = self.owner.wait_before_write(self.where)
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._closing.wait(), wait)
                if self._closing.is_set():
                    return
            if await self._show(self.latest):
                self._changed.set()  # more to show than one write carried

    async def _show(self, text: str) -> bool:
        """One write bringing the chat closer to ``text``; True when more writes are due."""
        if not text.strip():
            return False  # taken back: the next text (or the final one) replaces it
        try:
            if self.mode == "draft":
                shown = partial(pieces(text, self.adapter.live_limit)[0])
                if self.showing.get(0) == shown or not self.owner.may_write(self.where[0]):
                    return False
                await self.adapter.draft(self.chat_id, draft_id_of(self.key), shown)
                self.showing[0] = shown
                self._wrote()
                return False
            return await self._edit_step(text)
        except Flooded as flood:
            self.floods += 1
            self.owner.not_before[self.where] = self.owner.clock() + flood.retry_after
            self.owner.forget_past()
            log.info("flood control in %s chat %s (%d in this reply)", *self.where,
                     self.floods)
            return True
        except LiveRefused as refused:
            if self.mode == "draft":
                log.info("drafts refused in %s chat %s (%s); editing instead", *self.where,
                         refused)
                self.mode = "edit"
                return True
            log.info("a live edit was refused in %s chat %s: %s", *self.where, refused)
            return False
        except Exception:  # a live update is a courtesy: the final delivery still goes out
            log.warning("a live update to %s chat %s failed", *self.where, exc_info=True)
            return False

    async def _edit_step(self, text: str) -> bool:
        """Edit mode: send or edit the first message that does not show its piece yet."""
        if not self.messages and not worth_a_message(text):
            return False
        cut = pieces(text, self.adapter.live_limit)
        for number, piece in enumerate(cut, start=1):
            shown = partial(piece)
            if self.showing.get(number) == shown:
                continue
            if not self.owner.may_write(self.where[0]):
                return False  # dropped: the bot's writes are at their pace
            message_id = self.messages.get(number)
            if message_id is None:
                message_id = await self.adapter.post(self.chat_id, shown)
                self.messages[number] = message_id
                self.owner.shown.add(self.adapter.platform, self.chat_id, self.key, number,
                                     message_id)  # first thing after the platform took it
            else:
                await self.adapter.edit(self.chat_id, message_id, shown)
            self.showing[number] = shown
            self._wrote()
            return number < len(cut)
        return False

    def _wrote(self) -> None:
        self.owner.last_write[self.where] = self.owner.clock()
        self.owner.forget_past()
        self.updates += 1
        if self.updates == 1 and self.observer is not None:
            event: dict[str, Any] = {"event": EventKind.FIRST_VISIBLE, "mode": self.mode}
            if self.first_text_at is not None:
                event["after_first_text_s"] = round(time.monotonic() - self.first_text_at, 6)
            with contextlib.suppress(Exception):  # tracing is best-effort
                self.observer(event)

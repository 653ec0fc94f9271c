"""A full disk, as one episode: said once on the log and once to the owner, over when writes work.

Whatever first meets the full disk (the gateway recording a message, the answerer working on
one) calls ``failed``. The first call of an episode logs one line and starts the watch: it
tells the owner once, straight through the platform's adapter (a notice cannot be written to
the outbox while nothing can be written: it is sent unrecorded, and tried again each round
until it gets through), and probes the database with a real write every ``retry_s`` seconds.
The episode ends at the first write that works again (``room``: a probe, or a message
recorded); then one line says so and the callbacks given to ``on_room`` run (the gateway
answers the turns the full disk held). Later failures of the same episode are counted, not
logged: a thousand messages on a full disk make one line and one notice, not a thousand.

Usage::

    disk = DiskWatch(home, outbox, notifier, cursors)
    disk.on_room(answer_held)        # once there is room again
    disk.failed(error)               # where a write met the full disk
    disk.room()                      # after a write that worked
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from bot.config.text import escape_markdown
from bot.delivery.cursors import Cursors
from bot.delivery.notifier import OwnerNotifier
from bot.delivery.outbox import Outbox

log = logging.getLogger(__name__)
PROBE_CURSOR = "disk:probe"  # the probe's write: a real commit, as small as one can be
RETRY_S = 2.0  # as the Telegram intake asks for a refused batch again
NOTICE = "**The disk is full**\n{}"
NOTICE_TEXT = ("I cannot write to {} any more, so I am not taking in new messages for now. "
               "Nothing is lost: what people send waits with the chat platform, and I answer "
               "it once there is room. Please free some space on that disk.")


class DiskWatch:
    """Whether the disk is full now, and what happens when it fills and when it has room."""

    def __init__(self, home: Path, outbox: Outbox, notifier: OwnerNotifier, cursors: Cursors,
                 *, retry_s: float = RETRY_S, clock: Callable[[], float] = time.monotonic) -> None:
        """``home`` is named in the log line and the notice; ``cursors`` takes the probe's
        write; ``retry_s`` is how often a full disk is tried again."""
        self.home = home
        self.outbox = outbox
        self.notifier = notifier
        self.cursors = cursors
        self.retry_s = retry_s
        self.clock = clock
        self.full = False
        self.since = 0.0
        self.refused = 0  # writes the full disk refused in this episode
        self.told = False  # the owner got this episode's notice
        self._callbacks: list[Callable[[], Awaitable[object]]] = []
        self._watch: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[object]] = set()

    def on_room(self, callback: Callable[[], Awaitable[object]]) -> None:
        """Run ``callback`` each time a full disk has room again."""
        self._callbacks.append(callback)

    def failed(self, error: BaseException) -> None:
        """A write met the full disk: the first of an episode is logged and watched."""
        self.refused += 1
        if self.full:
            return
        self.full = True
        self.since = self.clock()
        self.told = False
        log.error("the disk of %s is full (%s): new messages are left with their platform and "
                  "recorded ones wait; they are answered once there is room (tried every %.0f "
                  "s)", self.home, " ".join(str(error).split()), self.retry_s)
        try:
            self._watch = asyncio.get_running_loop().create_task(self._watching())
        except RuntimeError:  # no event loop (a command): the next write tells
            self._watch = None

    def room(self) -> None:
        """A write worked: a full disk's episode is over (its held work goes on)."""
        if not self.full:
            return
        self.full = False
        log.warning("there is room on the disk of %s again (after %.0f s, %d writes refused): "
                    "answering what waited", self.home, self.clock() - self.since, self.refused)
        self.refused = 0
        if self._watch is not None and self._watch is not asyncio.current_task():
            self._watch.cancel()
        self._watch = None
        for callback in self._callbacks:
            task: asyncio.Task[object] = asyncio.get_running_loop().create_task(
                self._quietly(callback))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def settled(self) -> None:
        """Wait for what ``room`` started (tests)."""
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _quietly(self, callback: Callable[[], Awaitable[object]]) -> object:
        try:
            return await callback()
        except Exception:
            log.exception("after the disk had room again, answering what waited failed")
            return None

    async def _watching(self) -> None:
        """Tell the owner once; probe the database until a write works."""
        warned = False
        while self.full:
            if not self.told:
                self.told = await self._tell_owner(quiet=warned)
                warned = True
            await asyncio.sleep(self.retry_s)
            if self.full and self.probe():
                self.room()

    def probe(self) -> bool:
        """Whether a real write to the database works now."""
        try:
            self.cursors.set(PROBE_CURSOR, str(time.time()))
        except Exception:
            self.refused += 1
            return False
        return True

    async def _tell_owner(self, *, quiet: bool) -> bool:
        """The episode's one notice, sent unrecorded through the owner's platform's adapter;
        whether it got through (a failure is logged once per episode)."""
        text = NOTICE.format(escape_markdown(NOTICE_TEXT.format(self.home)))
        try:
            platform, chat = await self.notifier.owner_place()
            adapter = self.outbox.adapter(platform)
            if adapter is None:
                raise LookupError(f"{platform} is not running yet")
            for number, part in enumerate(adapter.split(text)):  # the platform's markup
                await adapter.send(chat, part, None, key=f"disk-full-{int(time.time())}-{number}")
        except Exception as exc:
            if not quiet:
                log.warning("could not tell the owner that the disk is full (%s); trying again "
                            "every %.0f s", exc, self.retry_s)
            return False
        return True

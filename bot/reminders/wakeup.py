"""Wake the running bot's reminder timer from another ``frontdesk`` process.

A reminder set by ``frontdesk chat`` lands in the shared SQLite file, but the timer of
``frontdesk run`` sleeps until its own next due time (or for ever, with nothing pending), and
SQLite tells no other process of a commit. So ``frontdesk run`` listens on a Unix socket in
``FRONTDESK_HOME`` (``wake.sock``) and any other process that changes the reminders connects
to it once: the timer then re-reads its next due time. Idle, it costs nothing (no polling);
with no bot listening the connect is refused and nothing happens. The standard library has
no cross-process event, and no maintained library does this one small thing, hence by hand.

Usage::

    wakeup = Wakeup(settings.home / "wake.sock")
    reminders.listeners.append(wakeup.poke)     # every process: tell a running bot
    await wakeup.listen(scheduler.poke)         # frontdesk run: be told
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)
MAX_PATH_BYTES = 100  # AF_UNIX paths are limited to ~108 bytes


class Wakeup:
    """One socket path: poke a process listening on it, or listen on it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server: asyncio.AbstractServer | None = None

    def poke(self) -> bool:
        """Tell the process listening here (not this one) to look again; False if none is."""
        if self.server is not None or len(str(self.path).encode()) > MAX_PATH_BYTES:
            return False
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as peer:
            peer.settimeout(0.5)
            try:
                peer.connect(str(self.path))
            except OSError:  # no bot running (refused), or no socket file
                return False
        return True

    async def listen(self, on_wake: Callable[[], None]) -> bool:
        """Call ``on_wake`` whenever another process pokes; False (logged) if it cannot."""
        if len(str(self.path).encode()) > MAX_PATH_BYTES:
            log.warning("FRONTDESK_HOME's path is too long for %s: reminders set by other "
                        "commands are seen at the timer's next wake-up", self.path.name)
            return False

        async def woken(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            writer.close()
            on_wake()

        with contextlib.suppress(FileNotFoundError):  # left by a process that was killed
            self.path.unlink()
        try:
            self.server = await asyncio.start_unix_server(woken, path=str(self.path))
        except OSError as exc:
            log.warning("cannot listen on %s (%s): reminders set by other commands are seen "
                        "at the timer's next wake-up", self.path, exc.strerror)
            return False
        return True

    async def close(self) -> None:
        """Stop listening and remove the socket file."""
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
            self.server = None
            with contextlib.suppress(FileNotFoundError):
                self.path.unlink()

"""What `frontdesk run` holds, as one log line on ``kill -USR1`` (bench/soak.py reads it).

Asyncio tasks and threads; the memory SQLite holds (its page caches and statements, with the
most it ever held: ``sqlitedb.memory``); Python's live objects (``sys.getallocatedblocks``);
and the C allocator's own count (glibc's ``mallinfo2``: the bytes handed out and the bytes it
keeps free without giving them back). Together they tell a heap that grows because something
is kept (the counts grow) from one that grows because the allocator keeps freed memory
(in use flat, kept free growing). Python's objects of 512 bytes or less live in its own
arenas, not malloc's: those are the blocks. Where glibc is not the C library, malloc's part is
left out.
"""

from __future__ import annotations

import asyncio
import ctypes
import logging
import sys
import threading
from functools import cache

from sqlitedb.memory import libc, sqlite_memory

log = logging.getLogger("bot.cli.run")  # the line's logger since it was first written


class MallInfo2(ctypes.Structure):
    """glibc's ``struct mallinfo2`` (2.33 and later): every field a ``size_t``."""

    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]


@cache
def _mallinfo2() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    library = libc()
    function = getattr(library, "mallinfo2", None)  # None: not glibc, or one older than 2.33
    if function is not None:
        function.restype = MallInfo2
    return function


def malloc_kib() -> tuple[int, int] | None:
    """(KiB the C allocator has handed out, KiB it keeps free), or None where unknown."""
    function = _mallinfo2()
    if function is None:
        return None
    info = function()
    return (info.uordblks + info.hblkhd) // 1024, info.fordblks // 1024


def log_holdings() -> None:
    """One INFO line: asyncio tasks, threads, SQLite's memory, Python's blocks, malloc's."""
    held = sqlite_memory()
    sqlite = f", SQLite {held[0] // 1024} KiB (most {held[1] // 1024})" if held else ""
    blocks = f", Python {sys.getallocatedblocks()} blocks"
    heap = malloc_kib()
    malloc = f", malloc {heap[0]} KiB in use, {heap[1]} KiB kept free" if heap else ""
    log.info("holding: %d asyncio tasks, %d threads%s%s%s", len(asyncio.all_tasks()),
             threading.active_count(), sqlite, blocks, malloc)

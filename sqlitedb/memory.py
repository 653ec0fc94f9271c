"""How much memory SQLite holds in this process: its page caches, prepared statements, schema.

Python's ``sqlite3`` does not say; the library does (``sqlite3_memory_used``, and the most it
ever held, ``sqlite3_memory_highwater``), read here through ``ctypes`` from the same library
the ``sqlite3`` module loaded. ``frontdesk run`` logs it on ``kill -USR1`` beside its asyncio
tasks (the soak bench samples it: issue 38). Each connection's page cache grows as it reads
pages, up to ``PRAGMA cache_size`` (2,000 KiB by default), so a growing database first looks
like a leak, then stops. ``give_back`` hands the memory the C allocator keeps free to the
system (glibc's ``malloc_trim``): after a prune, whose batches ran on a worker thread and
filled a page cache there, that memory would otherwise stay with the thread's allocator arena.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

__all__ = ["give_back", "libc", "sqlite_memory"]


@cache
def _library() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("sqlite3")
    if name is None:
        return None
    try:
        library = ctypes.CDLL(name)  # already loaded by ``sqlite3``: the same copy
    except OSError:
        return None
    for function in (library.sqlite3_memory_used, library.sqlite3_memory_highwater):
        function.restype = ctypes.c_int64
    library.sqlite3_memory_highwater.argtypes = [ctypes.c_int]
    return library


def sqlite_memory() -> tuple[int, int] | None:
    """(bytes SQLite holds now, the most it held), or None where the library is not found."""
    library = _library()
    if library is None:
        return None
    return int(library.sqlite3_memory_used()), int(library.sqlite3_memory_highwater(0))


@cache
def libc() -> ctypes.CDLL | None:
    """The C library this process runs on (loaded once), or None where it is not found."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def give_back() -> bool:
    """Return the free memory of every allocator arena to the system (glibc's
    ``malloc_trim(0)``); False where the C library has no such call (nothing is done)."""
    library = libc()
    if library is None or not hasattr(library, "malloc_trim"):
        return False
    library.malloc_trim(0)
    return True

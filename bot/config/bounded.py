"""Per-key state that does not grow with the keys ever seen: a lock table that forgets a lock
no one holds or waits on, and a set that remembers only its most recent members.

A front desk runs for months and meets many chats and people; a table filled per chat and
never emptied is a slow leak (issue 38). ``KeyedLocks`` keeps an entry only while a task holds
or waits on it, so it holds the chats being answered now, not every chat ever seen.
``RecentSet`` is for what may be forgotten at a small cost (a line logged twice): it keeps the
``limit`` most recently added members.

Usage::

    locks: KeyedLocks[tuple[str, str]] = KeyedLocks()
    async with locks.held(("telegram", "42")):
        ...
    told = RecentSet[str](limit=10_000)
    told.add("alice"); "alice" in told
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict
from collections.abc import AsyncIterator, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class _Entry:
    """One key's lock and how many tasks hold it or wait on it."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0


class KeyedLocks(Generic[K]):
    """An ``asyncio.Lock`` per key, made on first use and dropped when its last user leaves."""

    def __init__(self) -> None:
        self._entries: dict[K, _Entry] = {}
        self._stopped = False

    def __len__(self) -> int:
        """How many keys are held or waited on now."""
        return len(self._entries)

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    @contextlib.asynccontextmanager
    async def held(self, key: K) -> AsyncIterator[None]:
        """Hold ``key``'s lock for the block (after the tasks that asked before)."""
        if self._stopped:  # hold_all took every lock: nothing new starts, until cancelled
            await asyncio.Event().wait()
        entry = self._entries.get(key)
        if entry is None:
            entry = self._entries[key] = _Entry()
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0 and self._entries.get(key) is entry:
                del self._entries[key]

    async def hold_all(self) -> None:
        """Take every lock and keep it, new keys' too: no block starts any more (a stop).
        Returns once the blocks under way have ended."""
        self._stopped = True
        taken: set[int] = set()
        while pending := [entry for entry in self._entries.values() if id(entry) not in taken]:
            for entry in pending:
                entry.users += 1  # never released: the entry stays, and so does the hold
                taken.add(id(entry))
                await entry.lock.acquire()


class RecentSet(Generic[K]):
    """The ``limit`` most recently added members; the oldest is forgotten first."""

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"a RecentSet keeps at least one member, not {limit}")
        self.limit = limit
        self._members: OrderedDict[K, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, member: object) -> bool:
        return member in self._members

    def add(self, member: K) -> None:
        """Remember ``member`` as the newest; forget the oldest past the limit."""
        self._members[member] = None
        self._members.move_to_end(member)
        while len(self._members) > self.limit:
            self._members.popitem(last=False)

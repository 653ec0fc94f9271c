"""Per-key state that does not grow with the keys ever seen (issue 38): ``KeyedLocks`` forgets
a lock no one holds or waits on; ``RecentSet`` keeps only its newest members."""

from __future__ import annotations

import asyncio

import pytest

from bot.config.bounded import KeyedLocks, RecentSet


async def test_ten_thousand_keys_leave_an_empty_lock_table() -> None:
    locks: KeyedLocks[int] = KeyedLocks()
    entered = 0

    async def use(key: int) -> None:
        nonlocal entered
        async with locks.held(key):
            entered += 1
            await asyncio.sleep(0)

    await asyncio.gather(*(use(key % 10_000) for key in range(20_000)))
    assert entered == 20_000 and len(locks) == 0


async def test_a_lock_stays_while_someone_waits_and_still_excludes() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    order: list[str] = []
    first_in = asyncio.Event()
    release = asyncio.Event()

    async def first() -> None:
        async with locks.held("chat"):
            first_in.set()
            await release.wait()
            order.append("first")

    async def second() -> None:
        async with locks.held("chat"):
            order.append("second")

    one = asyncio.create_task(first())
    await first_in.wait()
    two = asyncio.create_task(second())
    await asyncio.sleep(0)  # second now waits on the lock
    assert "chat" in locks and order == []
    release.set()
    await asyncio.gather(one, two)
    assert order == ["first", "second"] and len(locks) == 0


async def test_a_cancelled_waiter_leaves_nothing_behind() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    inside = asyncio.Event()
    release = asyncio.Event()

    async def holder() -> None:
        async with locks.held("chat"):
            inside.set()
            await release.wait()

    async def waiter() -> None:
        async with locks.held("chat"):
            raise AssertionError("never reached")

    held = asyncio.create_task(holder())
    await inside.wait()
    waiting = asyncio.create_task(waiter())
    await asyncio.sleep(0)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    release.set()
    await held
    assert len(locks) == 0


async def test_hold_all_waits_for_the_block_under_way_and_starts_no_new_one() -> None:
    locks: KeyedLocks[str] = KeyedLocks()
    inside = asyncio.Event()
    release = asyncio.Event()
    ran: list[str] = []

    async def sending(key: str, wait: bool) -> None:
        async with locks.held(key):
            inside.set()
            if wait:
                await release.wait()
            ran.append(key)

    under_way = asyncio.create_task(sending("a", True))
    await inside.wait()
    holding = asyncio.create_task(locks.hold_all())
    await asyncio.sleep(0)
    assert not holding.done()  # the send under way finishes first
    release.set()
    await holding
    late = [asyncio.create_task(sending(key, False)) for key in ("a", "b")]
    for _ in range(20):  # many turns of the loop: a started block would have run by now
        await asyncio.sleep(0)
    assert ran == ["a"] and not any(task.done() for task in late)
    for task in late:
        task.cancel()
    await asyncio.gather(under_way, *late, return_exceptions=True)


def test_a_recent_set_keeps_its_newest_members() -> None:
    told: RecentSet[int] = RecentSet(limit=100)
    for member in range(10_000):
        told.add(member)
    told.add(9_900)  # added again: now the newest
    told.add(10_000)
    assert len(told) == 100
    assert 9_900 in told and 10_000 in told and 9_899 not in told and 0 not in told
    with pytest.raises(ValueError, match="at least one"):
        RecentSet(limit=0)

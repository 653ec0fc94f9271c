"""A chat's jobs run one after another, other chats' beside them, and a chat that has gone
quiet leaves nothing behind (issue 38: nothing kept per chat grows without bound)."""

from __future__ import annotations

import asyncio

from bot.adapters.chains import ChatChains


async def test_a_chats_jobs_keep_their_order_and_other_chats_do_not_wait() -> None:
    chains = ChatChains()
    done: list[str] = []
    first_may_end = asyncio.Event()

    async def job(name: str, wait: asyncio.Event | None = None) -> None:
        if wait is not None:
            await wait.wait()
        done.append(name)

    chains.add("a", lambda: job("a1", first_may_end))
    chains.add("a", lambda: job("a2"))
    chains.add("b", lambda: job("b1"))
    for _ in range(100):  # a few turns of the loop: b is answered while a's first job waits
        if done:
            break
        await asyncio.sleep(0)
    assert done == ["b1"]
    first_may_end.set()
    await asyncio.gather(*chains.tasks)
    assert done == ["b1", "a1", "a2"]


async def test_ten_thousand_chats_leave_no_entry_behind() -> None:
    chains = ChatChains()

    async def nothing() -> None:
        return None

    for number in range(10_000):
        chains.add(str(number), nothing)
    while chains.tasks:
        await asyncio.gather(*list(chains.tasks))
    assert chains.latest == {} and chains.tasks == set()


async def test_cancel_ends_every_unfinished_job() -> None:
    chains = ChatChains()
    never = asyncio.Event()
    ran: list[str] = []

    async def waits() -> None:
        await never.wait()
        ran.append("waited")

    chains.add("a", waits)
    chains.add("a", waits)
    await chains.cancel()
    assert chains.tasks == set() and chains.latest == {} and ran == []

"""Nothing kept per chat or per person grows with the chats and people ever seen (issue 38):
once their messages are answered, the chat locks, the bursts, the open turns, the send locks
and the live replies' pace hold nothing of them."""

from __future__ import annotations

import asyncio

from bot.chat.bursts import Bursts
from bot.messages import IncomingMessage
from tests.support.harness import HarnessFactory


def line(person: int, number: int, text: str = "hello there") -> IncomingMessage:
    return IncomingMessage("telegram", f"chat{person}", f"{person}-{number}", str(person), text)


def test_ten_thousand_people_leave_no_burst_state() -> None:
    bursts = Bursts(window=0.5)
    for person in range(10_000):
        lone = line(person, 1)
        command = line(person, 2, "/help")  # an own-path message, with its cut
        bursts.arrived(lone)
        bursts.arrived(command)
        assert [list(burst) for burst in bursts.due(lone)] == [[lone]]
        assert [list(burst) for burst in bursts.due(command)] == [[command]]
    assert len(bursts) == 0


def test_a_person_forgotten_starts_their_next_burst_afresh() -> None:
    bursts = Bursts(window=0.5)
    first = line(1, 1)
    bursts.arrived(first)
    list(bursts.due(first))
    assert len(bursts) == 0
    again = [line(1, 2), line(1, 3)]  # two lines together: one burst, as on the first day
    for msg in again:
        bursts.arrived(msg)
    assert len(bursts) == 1 and bursts.left(again[0]) > 0
    assert [list(burst) for burst in bursts.due(again[1])] == [again]
    list(bursts.due(again[0]))  # its line was answered with the burst
    assert len(bursts) == 0


async def test_many_chats_answered_leave_the_tables_empty(make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_MERGE_WINDOW="0.2")
    chats = [f"group{n}" for n in range(300)]
    replies = await asyncio.gather(*(harness.gateway.handle(
        harness.message("what time is it?", chat=chat)) for chat in chats))
    assert all(reply is not None for reply in replies)
    await harness.services.delivery.outbox.flush("telegram")
    assert {chat for chat, _ in harness.adapter.sent} >= set(chats)
    assert len(harness.gateway.locks) == 0
    assert len(harness.gateway.turns.bursts) == 0
    assert len(harness.gateway.turns) == 0
    assert len(harness.services.delivery.outbox.send_locks) == 0

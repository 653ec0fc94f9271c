"""All of one bot's writes to Telegram keep one pace (FRONTDESK_WRITES_PER_SECOND, 25): forty
group chats streaming answers at once, through the real live replies, outbox and
python-telegram-bot against the fake Bot API, which counts the writes in every second. Live
edits give way (dropped), every final answer arrives."""

from __future__ import annotations

import asyncio
import bisect

from bot.delivery.pace import WritePace
from tests.fakes.telegram_server import ApiCall, FakeTelegramServer
from tests.support.telegram_bot import Starter, TelegramBot

CHATS = [-4000 - n for n in range(40)]
WORDS = [f"word{n}" for n in range(40)]
FINAL = "The whole answer, " + " ".join(WORDS) + "."
WRITES = ("sendMessage", "editMessageText", "sendMessageDraft", "deleteMessage")
WORD_EVERY_S = 0.02  # the model's pace: a word every 20 ms in every chat


async def stream_everywhere(tg: TelegramBot) -> int:
    """Stream an answer in every chat at once, then deliver it; the live updates fed."""
    live, outbox = tg.services.delivery.live, tg.services.delivery.outbox
    fed = 0

    async def stream(chat: int) -> None:
        nonlocal fed
        async with live.showing("telegram", str(chat), f"k{chat}", False) as reply:
            assert reply is not None
            text = "The whole answer,"
            for word in WORDS:
                text += f" {word}"
                reply(text)
                fed += 1
                await asyncio.sleep(WORD_EVERY_S)
        await outbox.deliver("telegram", str(chat), f"k{chat}", FINAL)

    await asyncio.gather(*(stream(chat) for chat in CHATS))
    return fed


def writes(server: FakeTelegramServer) -> list[ApiCall]:
    return [c for c in server.calls if c.method in WRITES and c.error_code is None
            and c.params.get("chat_id") in CHATS]


def busiest_second(calls: list[ApiCall]) -> int:
    """The most writes the server answered within any one second."""
    times = sorted(c.at for c in calls)
    return max(bisect.bisect_left(times, t + 1.0) - i for i, t in enumerate(times))


async def start(start_telegram: Starter, server: FakeTelegramServer, **env: str) -> TelegramBot:
    tg = await start_telegram(FRONTDESK_STREAM_INTERVAL="0.05", **env)
    for chat in CHATS:
        server.add_chat(chat, "group")
    return tg


async def test_forty_chats_streaming_stay_within_the_bots_pace_and_all_finals_arrive(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    tg = await start(start_telegram, telegram_server)
    fed = await asyncio.wait_for(stream_everywhere(tg), 120)
    for chat in CHATS:  # every final answer, once, none dropped
        assert [m.text for m in telegram_server.messages_to(chat)] == [FINAL], chat
    calls = writes(telegram_server)
    assert busiest_second(calls) <= 25, busiest_second(calls)
    live_edits = [c for c in calls if c.method in ("sendMessage", "editMessageText")
                  and str(c.params.get("text", "")).endswith("\u2026")]
    assert live_edits  # answers were shown as they were written ...
    assert len(live_edits) < fed // 4  # ... but most updates gave way


async def test_without_the_pace_the_same_streams_pass_telegrams_limit(
        start_telegram: Starter, telegram_server: FakeTelegramServer) -> None:
    # the check above is not idle: unpaced, these chats write far more than 25 in a second
    tg = await start(start_telegram, telegram_server, FRONTDESK_WRITES_PER_SECOND="100000")
    await asyncio.wait_for(stream_everywhere(tg), 120)
    assert busiest_second(writes(telegram_server)) > 30


async def test_a_final_write_waits_for_its_slot_and_live_writes_give_way() -> None:
    now = [100.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        now[0] += seconds

    pace = WritePace(5, clock=lambda: now[0], sleep=sleep)
    assert [pace.try_take("telegram") for _ in range(5)] == [True] * 4 + [False]  # 4/5 live
    await pace.take("telegram")  # the fifth slot, at once: finals get the rest
    assert slept == [] and not pace.try_take("telegram")
    await pace.take("telegram")  # the window is full: waits for the first slot to leave it
    assert slept and abs(sum(slept) - 1.1) < 1e-9
    assert pace.try_take("discord")  # each platform its own pace

"""One turn for a burst: close lines of one person are answered once, through the real gateway.

The gateway tests drive ``accept`` and ``process`` as the Telegram intake and the Discord
adapter do (each message recorded, then answered in the background); the Telegram ones go
through python-telegram-bot against the fake Bot API.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

from bot.chat.backlog import backlog_bursts
from bot.chat.bursts import Bursts
from bot.delivery.inbox import InboxItem
from bot.messages import Attachment, IncomingMessage, Reply
from tests.adapters.discord.test_attachments import reply_in, serving
from tests.fakes.discord_server import OWNER_ID, discord_py_on_fake
from tests.support.harness import (
    Harness,
    HarnessFactory,
    until,
)
from tests.support.telegram_bot import OWNER, Starter


def inbox(harness: Harness) -> list[tuple[str, str, str | None]]:
    """(message id, status, run id) of every inbox row, in order."""
    rows = harness.services.delivery.inbox.conn.execute(
        "SELECT message_id, status, run_id FROM inbox ORDER BY rowid").fetchall()
    return [(str(m), str(s), r) for m, s, r in rows]


async def burst_of(harness: Harness, texts: list[str], user: str = "100") -> list[Reply | None]:
    """Record every text first (as one update batch is), then answer each in the background."""
    accepted = [harness.gateway.accept(harness.message(text, user)) for text in texts]
    return list(await asyncio.gather(*(harness.gateway.process(a) for a in accepted if a)))


async def test_a_burst_of_lines_is_one_turn_and_one_reply(make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_MERGE_WINDOW="0.3")
    lines = ["what is on", "my agenda", "for tomorrow?"]
    replies = await burst_of(harness, lines)
    [reply] = [r for r in replies if r is not None]
    assert harness.adapter.to("100") == [reply.text]
    assert reply.text == "agent: " + "\n".join(lines)  # the model saw the lines in order
    rows = inbox(harness)
    assert [status for _, status, _ in rows] == ["answered"] * 3
    assert {run for _, _, run in rows} == {reply.run_id}
    run = harness.services.flows.store.run(reply.run_id or "")
    assert run is not None and run.meta["messages"] == [m for m, _, _ in rows]
    assert harness.services.flows.store.record(reply.run_id or "").state["messages"] == \
        [m for m, _, _ in rows]
    assert len(harness.big.history) == 1


async def test_a_burst_is_capped_at_ten_lines(make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_MERGE_WINDOW="0.3")
    lines = [f"line {n} of the list" for n in range(12)]
    await burst_of(harness, lines)
    sent = harness.adapter.to("100")
    assert sent == ["agent: " + "\n".join(lines[:10]), "agent: " + "\n".join(lines[10:])]
    assert len({run for _, _, run in inbox(harness)}) == 2


async def test_a_command_keeps_its_own_turn_between_the_lines(
        make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_MERGE_WINDOW="0.3")
    replies = await burst_of(harness, ["one question?", "/notes", "another question?"])
    assert [r.route if r else None for r in replies] == ["full_agent", "command", "full_agent"]
    sent = harness.adapter.to("100")
    assert sent[0] == "agent: one question?" and sent[1].startswith("You have no notes")
    assert sent[2] == "agent: another question?" and len(sent) == 3


async def test_two_people_in_one_group_are_two_turns(make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_MERGE_WINDOW="0.3")
    # real requests, not placeholders: the offline router routes them (docs/router.md)
    messages = [harness.message(text, user, chat="group") for text, user in
                [("can you check the invoice?", "100"), ("what time do you open?", "200"),
                 ("and the receipt from May", "100")]]
    accepted = [harness.gateway.accept(msg) for msg in messages]
    await asyncio.gather(*(harness.gateway.process(a) for a in accepted if a))
    assert sorted(harness.adapter.to("group")) == [
        "agent: can you check the invoice?\nand the receipt from May",
        "agent: what time do you open?"]


async def test_merging_off_answers_each_line(make_harness: HarnessFactory) -> None:
    harness = await make_harness(FRONTDESK_MERGE_WINDOW="0")
    await burst_of(harness, ["first?", "second?"])
    assert harness.adapter.to("100") == ["agent: first?", "agent: second?"]


def test_a_file_closes_the_burst_and_keeps_its_own_path() -> None:
    bursts = Bursts(1.0)
    line = IncomingMessage("telegram", "1", "1", "7", "look at this")
    photo = IncomingMessage("telegram", "1", "2", "7", "the caption",
                            attachments=(Attachment(kind="photo", ref="f"),))
    after = IncomingMessage("telegram", "1", "3", "7", "what do you think?")
    for msg in (line, photo, after):
        bursts.arrived(msg)
    assert [[m.message_id for m in b] for b in bursts.due(photo)] == [["1"], ["2"]]
    assert list(bursts.due(line)) == []  # taken before the file, with its own process gone
    assert [[m.message_id for m in b] for b in bursts.due(after)] == [["3"]]


def test_a_line_recorded_again_is_held_once() -> None:
    """A batch rolled back (a full disk) and delivered again records its lines again."""
    bursts = Bursts(1.0)
    first = IncomingMessage("telegram", "1", "1", "7", "a question in two lines:")
    second = IncomingMessage("telegram", "1", "2", "7", "what is on today?")
    for msg in (first, second, first, second):
        bursts.arrived(msg)
    assert [[m.message_id for m in b] for b in bursts.due(first)] == [["1", "2"]]
    assert list(bursts.due(second)) == []  # answered with the first, once


def test_after_a_restart_the_open_lines_of_a_window_are_one_turn_again() -> None:
    def item(n: int, at: float, run: str | None = None) -> tuple[IncomingMessage, InboxItem]:
        msg = IncomingMessage("telegram", "1", str(n), "7", f"line {n}")
        return msg, InboxItem("telegram", "1", str(n), "{}", run, at)

    backlog = [item(1, 0.0, "m-x"), item(2, 0.1, "m-x"), item(3, 0.2), item(4, 1.0),
               item(5, 9.0)]
    groups = backlog_bursts(backlog, window=1.5)
    assert [[m.message_id for m in g] for g in groups] == [["1", "2"], ["3", "4"], ["5"]]
    assert [len(g) for g in backlog_bursts(backlog, window=0)] == [2, 1, 1, 1]


async def test_telegram_lines_sent_together_get_one_reply(start_telegram: Starter) -> None:
    bot = await start_telegram(FRONTDESK_MERGE_WINDOW="0.3")
    for text in ("hello, a question:", "is the office open", "on saturday?"):
        bot.server.push_message(OWNER, OWNER, text)
    await bot.pump()
    [reply] = bot.replies(OWNER)
    assert "office open" in reply or "offline" in reply
    with sqlite3.connect(Path(bot.services.settings.database)) as db:
        rows = db.execute("SELECT status, run_id FROM inbox").fetchall()
    assert len(rows) == 3 and {status for status, _ in rows} == {"answered"}
    assert len({run for _, run in rows}) == 1
    [run] = bot.services.flows.store.runs(limit=10)
    assert "is the office open" in str(bot.services.flows.store.record(run.id).state["text"])


async def test_discord_lines_sent_together_get_one_reply(tmp_path: Path) -> None:
    async with discord_py_on_fake() as fake, serving(fake, tmp_path / "home",
                                                     FRONTDESK_MERGE_WINDOW="0.5") as adapter:
        channel = fake.dm_channel_id(OWNER_ID)
        # The offline model answers a lone line before the next event is even read: the
        # chat is kept busy until both lines are in, so they come together, as over a network.
        async with adapter.desk.locks.of("discord", str(channel)):  # the gateway's
            for text in ("a question in two lines:", "what is on my agenda today?"):
                fake.push_message(text)
            await until(lambda: len(adapter.read_back.cursors.conn.execute(
                "SELECT 1 FROM inbox").fetchall()) == 2)
        [reply] = await reply_in(fake, channel)
        rows = await until(lambda: [row for row in adapter.read_back.cursors.conn.execute(
            "SELECT status, run_id FROM inbox") if row[0] == "answered"] or None)
        assert len(rows) == 2 and len({run for _, run in rows}) == 1
        assert len(fake.sent_to(channel)) == 1 and reply

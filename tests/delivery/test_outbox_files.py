"""Files in replies: the outbox keeps a reply's file with its part and sends it once, in order,
through the real clients — python-telegram-bot's multipart ``sendDocument`` against the fake
Bot API, discord.py's ``files[0]`` upload against the fake Discord — and the console saves it.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import icalendar
import pytest
import telegram

from bot.adapters.console import ConsoleAdapter
from bot.adapters.discord.adapter import DiscordAdapter, DiscordTuning
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.app import App, assemble
from bot.messages import OutgoingFile
from tests.fakes.discord_server import OWNER_ID, TOKEN, FakeDiscord, discord_py_on_fake
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.harness import OWNER, make_settings

UID = "frontdesk-meeting-0123456789abcdef01234567@frontdesk"
CHAT = 4242


def ics_file(uid: str = UID) -> OutgoingFile:
    """A real one-event calendar, written by icalendar."""
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//Frontdesk tests//EN")
    calendar.add("version", "2.0")
    event = icalendar.Event()
    event.add("uid", uid)
    event.add("summary", "Meeting with Bob: the budget")
    event.add("dtstart", icalendar.vDatetime.from_ical("20260303T090000Z"))
    event.add("dtend", icalendar.vDatetime.from_ical("20260303T093000Z"))
    event.add("dtstamp", icalendar.vDatetime.from_ical("20260301T120000Z"))
    calendar.add_component(event)
    return OutgoingFile("meeting-2026-03-03.ics", "text/calendar", calendar.to_ical())


def event_uid(data: bytes) -> str:
    [event] = icalendar.Calendar.from_ical(data).walk("VEVENT")
    return str(event["UID"])


@dataclass
class OnTelegram:
    server: FakeTelegramServer
    bot: telegram.Bot

    def attach(self, services: App) -> None:
        services.delivery.outbox.register(TelegramAdapter(self.bot, services.chat.gateway, OWNER))


@pytest.fixture
async def tg(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[OnTelegram]:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    async with FakeTelegramServer() as server:
        server.add_chat(CHAT)
        async with telegram.Bot(server.token, base_url=server.base_url) as bot:
            yield OnTelegram(server, bot)


async def test_a_short_reply_carries_its_file_as_the_caption_of_one_telegram_document(
        home: Path, tg: OnTelegram) -> None:
    services = assemble(make_settings(home))
    tg.attach(services)
    await services.delivery.outbox.deliver(
        "telegram", str(CHAT), "k1", "Booked: **Tue 3 Mar**, 10:00", file=ics_file())
    [message] = tg.server.messages_to(CHAT)
    assert message.text == "Booked: Tue 3 Mar, 10:00" and message.parse_mode == "HTML"
    assert message.document is not None
    assert message.document.file_name == "meeting-2026-03-03.ics"
    assert message.document.content_type == "text/calendar"
    assert message.document.data == ics_file().data and event_uid(message.document.data) == UID
    await services.delivery.outbox.deliver("telegram", str(CHAT), "k1", "Booked again?",
                                  file=ics_file())  # the same reply: nothing more
    await services.delivery.outbox.flush("telegram")
    assert len(tg.server.messages_to(CHAT)) == 1


async def test_a_reply_too_long_for_a_caption_sends_its_text_then_the_file(
        home: Path, tg: OnTelegram) -> None:
    services = assemble(make_settings(home))
    tg.attach(services)
    text = "Booked. " + "A long note about the meeting. " * 60  # past 1,024 characters
    await services.delivery.outbox.deliver("telegram", str(CHAT), "k2", text, file=ics_file())
    sent = tg.server.messages_to(CHAT)
    assert [m.document is None for m in sent] == [True, False]
    assert sent[0].text.strip() == text.strip() and sent[1].text == ""
    assert sent[1].document is not None and event_uid(sent[1].document.data) == UID


async def test_a_file_waiting_from_before_a_crash_is_sent_once_in_order(
        home: Path, tg: OnTelegram) -> None:
    before = assemble(make_settings(home))  # no adapter yet: the parts stay in the outbox
    outbox = before.delivery.outbox
    await outbox.deliver("telegram", str(CHAT), "k3", "first")
    await outbox.deliver("telegram", str(CHAT), "k4", "Booked: Tue", file=ics_file())
    await outbox.deliver("telegram", str(CHAT), "k5", "last")
    after = assemble(make_settings(home))  # the next process
    tg.attach(after)
    await after.delivery.outbox.flush("telegram")
    await after.delivery.outbox.flush("telegram")
    sent = tg.server.messages_to(CHAT)
    assert [m.text for m in sent] == ["first", "Booked: Tue", "last"]
    assert [m.document is not None for m in sent] == [False, True, False]


async def test_a_refused_file_is_marked_failed_and_the_chat_goes_on(
        home: Path, tg: OnTelegram) -> None:
    services = assemble(make_settings(home))
    tg.attach(services)
    tg.server.fail_next("sendDocument", error_code=400)  # refused for good
    await services.delivery.outbox.deliver("telegram", str(CHAT), "k6", "Booked: Tue",
                                           file=ics_file())
    await services.delivery.outbox.deliver("telegram", str(CHAT), "k7", "and then this")
    assert [m.text for m in tg.server.messages_to(CHAT)] == ["and then this"]
    [failure] = services.delivery.parts.failures()
    assert failure.kind == "part" and failure.item == "k6 part 1/1"
    await services.delivery.outbox.flush("telegram")  # never tried again
    assert len(tg.server.calls_of("sendDocument")) == 1


async def test_discord_posts_the_file_as_the_messages_attachment(home: Path) -> None:
    async with discord_py_on_fake() as fake:
        services = assemble(make_settings(home, DISCORD_OWNER_ID=str(OWNER_ID),
                                          DISCORD_BOT_TOKEN=TOKEN))
        adapter = DiscordAdapter(services.chat.gateway, services.delivery.cursors,
                                 services.settings,
                                 DiscordTuning(ready_timeout=0.05, identify_delay=0.0,
                                               retry_base_s=0.01))
        running = asyncio.create_task(adapter.start(TOKEN))
        try:
            await asyncio.wait_for(adapter.serving.wait(), 10)
            dm = await adapter.owner_chat()
            assert dm is not None
            await services.delivery.outbox.deliver("discord", dm, "k1", "Booked: **Tue**",
                                          file=ics_file())
            [message] = await fake.wait_for(lambda: fake.sent_to(int(dm)))
        finally:
            await adapter.close()
            await asyncio.gather(running, return_exceptions=True)
    assert message["content"] == "Booked: **Tue**"
    [attachment] = message["attachments"]
    assert attachment["filename"] == "meeting-2026-03-03.ics"
    assert attachment["content_type"] == "text/calendar"
    assert event_uid(check_discord_bytes(fake, attachment["id"])) == UID


def check_discord_bytes(fake: FakeDiscord, attachment_id: str) -> bytes:
    data = fake.files[attachment_id]
    assert data == ics_file().data
    return data


async def test_the_console_names_the_file_and_saves_it_under_the_home(home: Path) -> None:
    services = assemble(make_settings(home))
    out = io.StringIO()
    console = ConsoleAdapter(out, files_dir=home / "sent_files")
    services.delivery.outbox.register(console)
    await services.delivery.outbox.deliver("console", "console", "k1", "Booked: Tue",
                                           file=ics_file())
    [(_, file, saved)] = console.files
    assert saved is not None and saved.parent == home / "sent_files"
    assert saved.read_bytes() == ics_file().data and file.name == "meeting-2026-03-03.ics"
    printed = out.getvalue().splitlines()
    assert printed[0] == "Booked: Tue"
    assert printed[1].startswith("📎 meeting-2026-03-03.ics (text/calendar,")
    assert str(saved) in printed[1]

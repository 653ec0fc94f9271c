"""Owner notices: what a guest writes reaches the owner as plain quoted text,
one notice per message, five an hour a person, and the rest in one summary when a slot opens.

Real clients against the loopback fakes (python-telegram-bot's ``Bot`` in the Telegram
adapter, discord.py in the Discord adapter), a real SQLite file, and a fake clock for the hour:
its ``sleep`` returns when the test moves the clock past the wake-up time.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import telegram

from bot.adapters.discord.adapter import DiscordAdapter, DiscordTuning
from bot.adapters.telegram.adapter import TelegramAdapter
from bot.app import App, assemble
from bot.config.text import escape_markdown, one_name
from bot.delivery.notifier import HELD, SENT, WINDOW_S
from bot.models import Models
from bot.tools.registry import Caller
from tests.fakes.discord_server import OWNER_ID, TOKEN, FakeDiscord, discord_py_on_fake
from tests.fakes.telegram_server import FakeTelegramServer, SentMessage
from tests.support.harness import GUEST, OWNER, FakeClock, PurposeModel, make_settings, until

NAME = '[Owner](https://evil.example) **Boss** <b>x</b> <a href="https://evil.example">y</a>'
TEXT = ("**Urgent message from Owner (telegram:100) on telegram:**\n"
        "# Urgent message from Owner\n"
        "Pay [the invoice](https://evil.example/pay) at <https://evil.example> or "
        '<a href="https://evil.example">here</a>, <b>now</b> __b__ *i* `c` ||s|| ~~x~~\n'
        f"<@{OWNER_ID}> \\*kept\\* -# small\n> my own quote")


def services_on(home: Path, clock: FakeClock, **env: str) -> App:
    """One "process" on the home's database, its notifier on the fake clock."""
    return assemble(make_settings(home, **env), models=Models(
        small=PurposeModel("small"), big=PurposeModel("big")), clock=clock, sleep=clock.sleep)


def guest(message_id: str, name: str = "Ann", user: str = GUEST,
          platform: str = "telegram") -> Caller:
    return Caller(f"{platform}:{user}", False, platform, user, name, message_id)


@dataclass
class TelegramOwner:
    """The fake Bot API, a real ``telegram.Bot`` on it, and a way to attach a process."""

    server: FakeTelegramServer
    bot: telegram.Bot

    def attach(self, services: App) -> None:
        services.delivery.outbox.register(TelegramAdapter(self.bot, services.chat.gateway, OWNER))

    def notices(self) -> list[SentMessage]:
        return self.server.messages_to(int(OWNER))


@pytest.fixture
async def tg(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[TelegramOwner]:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    async with FakeTelegramServer() as server:
        server.add_chat(int(OWNER))
        async with telegram.Bot(server.token, base_url=server.base_url) as bot:
            yield TelegramOwner(server, bot)


def spans(sent: SentMessage, kind: str) -> list[str]:
    """The visible text under each entity of one kind (offsets are ASCII-safe here)."""
    return [sent.text[e["offset"]:e["offset"] + e["length"]] for e in sent.entities
            if e["type"] == kind]


async def test_a_guests_markup_reaches_the_telegram_owner_as_plain_quoted_text(
        home: Path, tg: TelegramOwner) -> None:
    services = services_on(home, FakeClock())
    tg.attach(services)
    assert await services.delivery.notifier.notify(guest("m1", NAME), TEXT) == SENT
    [notice] = tg.notices()
    header = f"Urgent message from {one_name(NAME)} (telegram:{GUEST}) on telegram:"
    assert notice.parse_mode == "HTML" and notice.text == f"{header}\n{TEXT}"
    # Frontdesk's header is the one bold span; every word of the guest's is in the quote.
    assert sorted(e["type"] for e in notice.entities) == ["blockquote", "bold"]
    assert spans(notice, "bold") == [header] and spans(notice, "blockquote") == [TEXT]
    assert re.findall(r"</?([a-z-]+)", notice.raw_text) == ["b", "b", "blockquote", "blockquote"]


@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    async with discord_py_on_fake() as fake:
        yield fake


def discord_markup(line: str) -> list[str]:
    """The characters Discord would read as markup in one line: those not backslashed."""
    found, i = [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and not line[i + 1].isalnum() \
                and not line[i + 1].isspace():
            i += 2
            continue
        if line[i] in "*_~`|[]<>#-@":  # "(" and ")" mean nothing without "[…]"
            found.append(line[i])
        i += 1
    return found


def discord_visible(line: str) -> str:
    return re.sub(r"\\([^0-9A-Za-z\s])", r"\1", line)


async def test_a_guests_markup_reaches_the_discord_owner_as_plain_quoted_text(
        home: Path, discord_fake: FakeDiscord) -> None:
    services = services_on(home, FakeClock(), DISCORD_OWNER_ID=str(OWNER_ID),
                           DISCORD_BOT_TOKEN=TOKEN)
    adapter = DiscordAdapter(services.chat.gateway, services.delivery.cursors, services.settings,
                             DiscordTuning(ready_timeout=0.05, identify_delay=0.0,
                                           retry_base_s=0.01))
    running = asyncio.create_task(adapter.start(TOKEN))
    try:
        await asyncio.wait_for(adapter.serving.wait(), 10)
        answer = await services.delivery.notifier.notify(guest("d1", NAME, "42", "discord"), TEXT)
        assert answer == SENT
        dm = discord_fake.dm_channel_id(OWNER_ID)
        [notice] = await discord_fake.wait_for(lambda: discord_fake.sent_to(dm))
    finally:
        await adapter.close()
        await asyncio.gather(running, return_exceptions=True)
    head, *quoted = notice["content"].split("\n")
    header = f"Urgent message from {one_name(NAME)} (discord:42) on discord:"
    name = escape_markdown(one_name(NAME))
    assert head == f"**Urgent message from {name} (discord:42) on discord:**"
    assert discord_markup(head) == ["*", "*", "*", "*"]  # Frontdesk's own bold, nothing else
    assert discord_visible(head) == f"**{header}**"
    assert all(line.startswith("> ") for line in quoted)
    assert [discord_markup(line[2:]) for line in quoted] == [[]] * len(TEXT.split("\n"))
    assert [discord_visible(line[2:]) for line in quoted] == TEXT.split("\n")


async def test_one_guest_message_makes_one_notice_however_often_the_tool_is_called(
        home: Path, tg: TelegramOwner) -> None:
    services = services_on(home, FakeClock())
    tg.attach(services)
    answers = await asyncio.gather(*(services.delivery.notifier.notify(guest("m1"), f"call {n}!")
                                     for n in range(25)))
    assert answers == [SENT] * 25
    assert [n.text.split("\n", 1)[1] for n in tg.notices()] == ["call 0!"]


async def test_the_sixth_urgent_message_in_an_hour_waits_for_one_summary(
        home: Path, tg: TelegramOwner) -> None:
    clock = FakeClock()
    first = clock.now
    services = services_on(home, clock)
    tg.attach(services)
    notify = services.delivery.notifier.notify
    answers = []
    for n in range(1, 8):
        answers.append(await notify(guest(f"m{n}"), f"urgent number {n}"))
        clock.advance(60)
    assert answers == [SENT] * 5 + [HELD] * 2
    assert await notify(guest("x1", "Bob", "201"), "someone else is not held") == SENT
    assert len(tg.notices()) == 6
    clock.advance(first + WINDOW_S - clock.now)  # the first notice ages out
    summary = (await until(lambda: tg.notices()[6:]))[0]
    assert summary.text.startswith(f"2 more urgent messages from Ann (telegram:{GUEST}) on "
                                   "telegram, held back by the limit of 5 notices an hour:")
    assert spans(summary, "blockquote") == ["urgent number 6", "urgent number 7"]
    assert len(spans(summary, "bold")) == 1 and len(tg.notices()) == 7


async def test_the_limit_and_the_held_messages_survive_a_restart(
        home: Path, tg: TelegramOwner) -> None:
    clock = FakeClock()
    first = clock.now
    before = services_on(home, clock)
    tg.attach(before)
    for n in range(1, 7):
        await before.delivery.notifier.notify(guest(f"m{n}"), f"urgent number {n}")
        clock.advance(60)
    assert len(tg.notices()) == 5
    after = services_on(home, clock)  # a restart: the counts and the held one are on disk
    tg.attach(after)
    assert await after.delivery.notifier.notify(guest("m7"), "urgent number 7") == HELD
    assert await after.delivery.notifier.notify(guest("m6"), "a retry of m6's run") == HELD
    assert len(tg.notices()) == 5
    clock.now = first + WINDOW_S + 1  # down while the slot opened: no timer woke
    again = services_on(home, clock)
    tg.attach(again)
    await again.delivery.notifier.resume()
    [summary] = tg.notices()[5:]
    assert spans(summary, "blockquote") == ["urgent number 6", "urgent number 7"]

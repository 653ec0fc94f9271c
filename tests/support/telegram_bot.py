"""Fixtures: a Frontdesk "process" in the test's loop, on Telegram's fake, with real PTB.

``TelegramBot`` is the gateway, the Telegram adapter and the intake on a real SQLite home,
signed in to the fake Bot API through python-telegram-bot (``make_bot``: the settings decide
the base URLs, as in production). ``await tg.pump()`` takes one batch of updates the way the
long poll does (record, confirm, answer) and waits until it is answered. Its fixtures
(``telegram_server``, ``openai_fake``, ``start_telegram``) reach every folder through
tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.adapters.telegram.adapter import TelegramAdapter
from bot.adapters.telegram.intake import OFFSET_CURSOR, Intake
from bot.adapters.telegram.start import make_bot
from bot.app import App, assemble
from bot.chat.gateway import Gateway
from bot.config.settings import Settings
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer, SentMessage

OWNER, GUEST = 4242, 5151


def settings_for(home: Path, **env: str) -> Settings:
    """Settings on ``home`` with the offline model unless ``env`` says otherwise."""
    return Settings.from_env({"FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "offline",
                              "FRONTDESK_MERGE_WINDOW": "0", **env})


@dataclass
class TelegramBot:
    """One in-process Frontdesk on Telegram (see the module docstring)."""

    server: FakeTelegramServer
    services: App
    gateway: Gateway
    adapter: TelegramAdapter
    intake: Intake

    async def pump(self) -> None:
        """Take the waiting updates as the long poll does, and answer them all."""
        offset = int(self.services.delivery.cursors.get(OFFSET_CURSOR) or 0)
        raws = await self.intake.fetch(offset)
        for item in self.intake.accept([r for r in raws if isinstance(r, dict)],
                                       confirm=True):
            self.intake.dispatch(item)
        await self.intake.idle()

    def replies(self, chat_id: int) -> list[str]:
        """What the bot sent to a chat, as its users read it."""
        return [m.text for m in self.server.messages_to(chat_id)]

    def last(self, chat_id: int) -> SentMessage:
        return self.server.messages_to(chat_id)[-1]


Starter = Callable[..., Awaitable[TelegramBot]]


@pytest.fixture
async def telegram_server() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server


@pytest.fixture
async def openai_fake() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def start_telegram(telegram_server: FakeTelegramServer, tmp_path: Path,
                         monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Starter]:
    """Start a TelegramBot on ``tmp_path/home`` with extra settings; all closed at the end."""
    monkeypatch.setenv("PTB_TIMEDELTA", "true")
    started: list[TelegramBot] = []

    async def start(**env: str) -> TelegramBot:
        settings = settings_for(tmp_path / "home", TELEGRAM_BOT_TOKEN=telegram_server.token,
                                TELEGRAM_BASE_URL=telegram_server.base_url,
                                TELEGRAM_OWNER_ID=str(OWNER),
                                TELEGRAM_ALLOWED_USERS=str(GUEST), **env)
        services = assemble(settings)
        gateway = services.chat.gateway
        await gateway.start()
        bot = make_bot(settings)
        await bot.initialize()
        adapter = TelegramAdapter(bot, gateway, settings.telegram_owner_id)
        intake = Intake(bot, bot.bot, gateway, adapter, services.delivery.cursors)
        await gateway.attach(adapter)
        for chat in (OWNER, GUEST):
            telegram_server.add_chat(chat)
        running = TelegramBot(telegram_server, services, gateway, adapter, intake)
        started.append(running)
        return running

    yield start
    for running in started:
        await running.intake.drain()
        await running.adapter.bot.shutdown()
        if running.services.chat.answerer.files.transcriber is not None:
            await running.services.chat.answerer.files.transcriber.aclose()

"""Fixtures: the fake Telegram Bot API in the test's loop, and a real python-telegram-bot Bot."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import telegram

from tests.fakes.telegram_server import FakeTelegramServer


@pytest.fixture
async def telegram_server() -> AsyncIterator[FakeTelegramServer]:
    async with FakeTelegramServer() as server:
        yield server


@pytest.fixture
async def bot(telegram_server: FakeTelegramServer,
              monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[telegram.Bot]:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # durations as timedelta, no deprecation noise
    async with telegram.Bot(telegram_server.token, base_url=telegram_server.base_url) as real:
        yield real

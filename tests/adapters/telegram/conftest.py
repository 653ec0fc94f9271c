"""Fixtures: a real python-telegram-bot Bot on the fake Telegram Bot API (``telegram_server``,
from tests/support/telegram_bot.py) in the test's loop."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import telegram

from tests.fakes.telegram_server import FakeTelegramServer


@pytest.fixture
async def bot(telegram_server: FakeTelegramServer,
              monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[telegram.Bot]:
    monkeypatch.setenv("PTB_TIMEDELTA", "true")  # durations as timedelta, no deprecation noise
    async with telegram.Bot(telegram_server.token, base_url=telegram_server.base_url) as real:
        yield real

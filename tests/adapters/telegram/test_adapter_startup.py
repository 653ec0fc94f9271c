"""Signing in: a Telegram that is down at start is waited for; a refused token stops clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.adapters.telegram.start import signed_in
from bot.config.settings import Settings
from tests.fakes.telegram_server import FakeTelegramServer


def settings_for(server: FakeTelegramServer, tmp_path: Path, token: str) -> Settings:
    return Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "TELEGRAM_BOT_TOKEN": token,
                              "TELEGRAM_BASE_URL": server.base_url})


async def test_an_unreachable_telegram_at_start_is_tried_again(
        telegram_server: FakeTelegramServer, tmp_path: Path) -> None:
    telegram_server.fail_next("getMe", 2, error_code=502, description="Bad Gateway")
    bot = await signed_in(settings_for(telegram_server, tmp_path, telegram_server.token),
                          max_delay=0.05)
    try:
        assert bot.username  # signed in on the third getMe
        assert [c.method for c in telegram_server.calls].count("getMe") == 3
    finally:
        await bot.shutdown()


async def test_a_refused_token_stops_with_one_sentence(
        telegram_server: FakeTelegramServer, tmp_path: Path) -> None:
    wrong = "123456:not-the-token"
    with pytest.raises(SystemExit) as stop:
        await signed_in(settings_for(telegram_server, tmp_path, wrong), max_delay=0.05)
    assert "TELEGRAM_BOT_TOKEN" in str(stop.value.code) and wrong not in str(stop.value.code)

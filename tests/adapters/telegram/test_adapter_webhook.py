"""Webhook mode: `frontdesk run` registers its endpoint and only takes updates that carry the
secret token Telegram was given (the fake Bot API plays Telegram's side)."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import httpx

from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import ALLOWED, FrontdeskProcess

FRIEND = ALLOWED[0]
SECRET = "s3cret-token_for-the-webhook"


class WebhookTelegram(FakeTelegramServer):
    """The fake Bot API, plus ``setWebhook`` (recorded, so the test can post as Telegram)."""

    def __init__(self) -> None:
        super().__init__()
        self.webhook: dict[str, Any] = {}

    async def _api_setwebhook(self, params: dict[str, Any]) -> bool:
        with self._lock:
            self.webhook = dict(params)
            return True


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_webhook_takes_updates_with_the_secret_and_refuses_the_rest(tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram-hook"
    with WebhookTelegram() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, env={
            "FRONTDESK_TELEGRAM_WEBHOOK_URL": url,
            "FRONTDESK_TELEGRAM_WEBHOOK_LISTEN": f"127.0.0.1:{port}",
            "FRONTDESK_TELEGRAM_WEBHOOK_SECRET": SECRET})
        bot.start(ready=lambda: telegram.webhook)
        assert telegram.webhook["url"] == url
        assert telegram.webhook["secret_token"] == SECRET
        assert telegram.polls == 0  # no long polling in webhook mode

        forged = telegram.push_message(FRIEND, FRIEND, "/help")
        real = telegram.push_message(FRIEND, FRIEND, "/notes")
        with httpx.Client(timeout=10) as client:
            missing = client.post(url, json=forged)
            wrong = client.post(url, json=forged,
                                headers={"X-Telegram-Bot-Api-Secret-Token": "guess"})
            right = client.post(url, json=real,
                                headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
            elsewhere = client.post(url + "/other", json=real,
                                    headers={"X-Telegram-Bot-Api-Secret-Token": SECRET})
        assert (missing.status_code, wrong.status_code) == (403, 403)
        assert (right.status_code, elsewhere.status_code) == (200, 404)
        [reply] = bot.replies(FRIEND, 1)
        assert reply.text.startswith("You have no notes yet")  # /notes, never /help
        bot.stop()

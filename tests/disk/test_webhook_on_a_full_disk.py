"""Webhook mode on a full disk: an update that cannot be recorded is answered 503, so Telegram
sends it again; no traceback is logged per request; once there is room it is answered once."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.adapters.telegram.test_adapter_webhook import SECRET, WebhookTelegram, free_port
from tests.disk.small_disk import fill, small_disk
from tests.support.telegram_process import ALLOWED, FrontdeskProcess

FRIEND = ALLOWED[0]


def test_a_webhook_update_on_a_full_disk_is_refused_503_then_answered_once(
        tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}/telegram-hook"
    secret = {"X-Telegram-Bot-Api-Secret-Token": SECRET}
    with small_disk(tmp_path / "home", "8m") as home, WebhookTelegram() as telegram:
        bot = FrontdeskProcess(telegram, home, env={
            "FRONTDESK_TELEGRAM_WEBHOOK_URL": url,
            "FRONTDESK_TELEGRAM_WEBHOOK_LISTEN": f"127.0.0.1:{port}",
            "FRONTDESK_TELEGRAM_WEBHOOK_SECRET": SECRET, "FRONTDESK_STREAM": "off"})
        bot.log_path = tmp_path / "bot.log"  # the bot's stderr is not on the full disk
        bot.start(ready=lambda: telegram.webhook)
        filler = fill(home)
        update = telegram.push_message(FRIEND, FRIEND, "/notes")
        with httpx.Client(timeout=10) as client:
            refused = [client.post(url, json=update, headers=secret).status_code
                       for _ in range(3)]  # Telegram's retries, while the disk is full
            assert refused == [503, 503, 503]
            filler.unlink()
            bot.poll(lambda: client.post(url, json=update, headers=secret).status_code == 200)
        [reply] = bot.replies(FRIEND, 1)
        assert reply.text.startswith("You have no notes yet")
        bot.stop()
        log = bot.log()
        assert "Traceback" not in log and "webhook request failed" not in log
        assert len(telegram.messages_to(FRIEND)) == 1  # answered once, whatever was retried

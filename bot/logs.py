"""Logging set-up: readable lines on stderr, secrets masked, chatty HTTP loggers kept quiet.

httpx logs every request URL at INFO, and a Telegram URL carries the bot token, so the HTTP
libraries log at WARNING only; and every record passes a filter that masks each configured
secret, wherever it appears (message, arguments or a formatted traceback).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable

from bot.settings import Settings

QUIET = ("httpx", "httpx2", "httpcore", "telegram.ext", "discord.gateway", "discord.http",
         "aiohttp.access")
MASK = "[redacted]"


class SecretFilter(logging.Filter):
    """Masks secrets in every record that passes through a handler."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = sorted({s for s in secrets if len(s) >= 6}, key=len, reverse=True)

    def scrub(self, text: str) -> str:
        """``text`` with every secret replaced."""
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            record.msg = self.scrub(record.getMessage())
            record.args = None
            if record.exc_info and not record.exc_text:
                record.exc_text = logging.Formatter().formatException(record.exc_info)
            if record.exc_text:
                record.exc_text = self.scrub(record.exc_text)
        return True


def setup_logging(settings: Settings, level: str | None = None) -> SecretFilter:
    """Configure the root logger once for the CLI; returns the filter (tests use ``scrub``)."""
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    secret_filter = SecretFilter(settings.secrets())
    handler.addFilter(secret_filter)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level or os.environ.get("FRONTDESK_LOG_LEVEL", "WARNING"))
    for name in QUIET:
        logging.getLogger(name).setLevel(logging.WARNING)
    return secret_filter

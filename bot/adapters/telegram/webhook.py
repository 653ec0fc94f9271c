"""Optional webhook mode: Telegram POSTs each update to a small HTTP endpoint of ours.

Set ``FRONTDESK_TELEGRAM_WEBHOOK_URL`` to the public https address Telegram should call (a
reverse proxy in front of this process terminates TLS); the endpoint listens on
``FRONTDESK_TELEGRAM_WEBHOOK_LISTEN`` (default ``127.0.0.1:8443``) at that URL's path. Every
request must carry Telegram's ``X-Telegram-Bot-Api-Secret-Token`` header with the secret
given to ``setWebhook`` (``FRONTDESK_TELEGRAM_WEBHOOK_SECRET``, else a fresh random one each
start); anything else gets 403. An update is answered 200 only once it is recorded, so
Telegram re-sends it if we crash before that. Plain asyncio streams: no web framework needed.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from telegram import Bot

from bot.adapters.telegram.intake import Intake
from bot.adapters.telegram.updates import ALLOWED_UPDATES
from bot.config.disk import disk_full

log = logging.getLogger(__name__)
SECRET_HEADER = "x-telegram-bot-api-secret-token"
MAX_BODY = 1 << 20  # Telegram's updates are far smaller
MAX_HEADERS = 100


@dataclass(frozen=True)
class WebhookConfig:
    """Where Telegram posts, where we listen, and the secret it must show."""

    url: str
    host: str
    port: int
    secret: str = field(repr=False)

    @property
    def path(self) -> str:
        return urlsplit(self.url).path or "/"

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> WebhookConfig | None:
        """The webhook settings, or None for long polling (the default)."""
        url = (env.get("FRONTDESK_TELEGRAM_WEBHOOK_URL") or "").strip()
        if not url:
            return None
        listen = (env.get("FRONTDESK_TELEGRAM_WEBHOOK_LISTEN") or "127.0.0.1:8443").strip()
        address = listen.rpartition(":")  # (host, ":", port)
        host = address[0]
        port = address[2]
        secret = (env.get("FRONTDESK_TELEGRAM_WEBHOOK_SECRET") or "").strip()
        return cls(url, host or "127.0.0.1", int(port), secret or secrets.token_urlsafe(32))


async def serve_webhook(bot: Bot, intake: Intake, config: WebhookConfig) -> None:
    """Register the webhook with Telegram, then answer its POSTs until cancelled."""

    async def on_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status = await _handle(reader, intake, config)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            status = 400
        except Exception as exc:
            if disk_full(exc):  # unrecorded, so unconfirmed: Telegram sends it again later
                intake.desk.not_recorded(exc)
                status = 503
            else:
                log.exception("webhook request failed")
                status = 500
        reason = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found",
                  413: "Payload Too Large", 500: "Internal Server Error",
                  503: "Service Unavailable"}[status]
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Length: 0\r\n"
                     "Connection: close\r\n\r\n".encode())
        try:
            await writer.drain()
        finally:
            writer.close()

    server = await asyncio.start_server(on_connection, config.host, config.port)
    async with server:
        await bot.set_webhook(config.url, secret_token=config.secret,
                              allowed_updates=ALLOWED_UPDATES, drop_pending_updates=False)
        log.info("Telegram webhook listening on %s:%s%s", config.host, config.port,
                 config.path)
        await server.serve_forever()


async def _handle(reader: asyncio.StreamReader, intake: Intake, config: WebhookConfig) -> int:
    """Read one request; record its update; the status code to answer."""
    request_line = (await reader.readline()).decode("latin-1").split(" ", 2)
    if len(request_line) != 3:  # method, target, version
        return 400
    method = request_line[0]
    target = request_line[1]
    headers: dict[str, str] = {}
    for _ in range(MAX_HEADERS):
        line = (await reader.readline()).decode("latin-1").strip()
        if not line:
            break
        header = line.partition(":")  # (name, ":", value)
        name = header[0]
        value = header[2]
        headers[name.strip().lower()] = value.strip()
    if method != "POST" or urlsplit(target).path != config.path:
        return 404
    shown = headers.get(SECRET_HEADER, "").encode()
    if not hmac.compare_digest(shown, config.secret.encode()):
        return 403
    length = int(headers.get("content-length", "0"))
    if not 0 < length <= MAX_BODY:
        return 413 if length > MAX_BODY else 400
    update = json.loads(await reader.readexactly(length))
    if not isinstance(update, dict):
        return 400
    for item in intake.accept([update], confirm=False):  # recorded before we say 200
        intake.dispatch(item)
    return 200

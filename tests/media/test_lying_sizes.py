"""A file whose size lies (or is not declared) costs no more than the limit to download.

Telegram's fake is made to lie here: ``getFile`` declares a small size (or none) and the
download streams far more without a ``Content-Length``; python-telegram-bot and the
bot's streamed download run for real. On Discord the attachment declares less than its URL
serves.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from tests.adapters.discord.test_attachments import reply_in, serving
from tests.fakes.discord_server import OWNER_ID, FakeDiscord
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_bot import OWNER, Starter

pytestmark = pytest.mark.filterwarnings("ignore:Please use 'Bot.getUpdates'")
SERVED_BYTES = 50 * 1024 * 1024
CHUNK = b"x" * 65536


class LyingTelegram(FakeTelegramServer):
    """getFile declares ``declared`` bytes (None: no size); the download streams 50 MB."""

    declared: int | None = 1000
    streamed = 0

    async def _api_getfile(self, params: dict[str, Any]) -> dict[str, Any]:
        found = await super()._api_getfile(params)
        found.pop("file_size")
        return found if self.declared is None else {**found, "file_size": self.declared}

    async def _download(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()  # chunked: no Content-Length to refuse it by
        await response.prepare(request)
        try:
            while self.streamed < SERVED_BYTES:
                await response.write(CHUNK)
                self.streamed += len(CHUNK)
        except (ConnectionError, RuntimeError):  # the bot hung up at its limit
            pass
        return response


@pytest.fixture
async def telegram_server() -> AsyncIterator[FakeTelegramServer]:
    async with LyingTelegram() as server:
        yield server


@pytest.mark.parametrize("declared", [1000, None])
async def test_a_telegram_file_that_lies_about_its_size_is_cut_off_at_the_limit(
        start_telegram: Starter, telegram_server: LyingTelegram, declared: int | None) -> None:
    telegram_server.declared = declared
    tg = await start_telegram(FRONTDESK_MAX_FILE_MB="1")
    telegram_server.push_document(OWNER, OWNER, b"small", "notes.txt", "text/plain",
                                  declared_size=declared)
    await tg.pump()
    [reply] = tg.replies(OWNER)
    assert reply.startswith("notes.txt is too big for me (I take files up to 1 MB).")
    assert telegram_server.streamed < SERVED_BYTES / 4  # it stopped reading early


async def test_a_discord_attachment_serving_more_than_it_declared_is_refused(
        tmp_path: Any) -> None:
    from tests.fakes.discord_server import discord_py_on_fake

    fake: FakeDiscord
    async with discord_py_on_fake() as fake, serving(fake, tmp_path / "home",
                                                     FRONTDESK_MAX_FILE_MB="1"):
        lying = fake.attachment(b"x" * (3 * 1024 * 1024), "scan.txt", "text/plain", size=100)
        fake.push_message("please read", attachments=[lying])
        [reply] = await reply_in(fake, fake.dm_channel_id(OWNER_ID))
    assert reply.startswith("scan\\.txt is too big for me (3.0 MB; I take files up to 1 MB).")

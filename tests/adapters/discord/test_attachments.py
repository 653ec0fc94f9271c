"""Discord attachments: discord.py reads them from the fake's attachment URLs.

The adapter runs in the test's loop against the fake Discord (REST, gateway and the files'
URLs on one port), on a real SQLite home with the offline model.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from bot.adapters.discord.adapter import DiscordAdapter, DiscordTuning
from bot.app import assemble
from tests.fakes.discord_server import OWNER_ID, TOKEN, FakeDiscord, discord_py_on_fake
from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.files import pdf_with_text, voice_note
from tests.support.telegram_bot import settings_for

VOICE_MESSAGE_FLAG = 1 << 13  # Discord's IS_VOICE_MESSAGE attachment flag


@pytest.fixture
async def discord_fake() -> AsyncIterator[FakeDiscord]:
    async with discord_py_on_fake() as fake:
        yield fake


@asynccontextmanager
async def serving(fake: FakeDiscord, home: Path, **env: str) -> AsyncIterator[DiscordAdapter]:
    settings = settings_for(home, DISCORD_BOT_TOKEN=TOKEN, DISCORD_OWNER_ID=str(OWNER_ID),
                            **env)
    services = assemble(settings)
    adapter = DiscordAdapter(services.chat.gateway, services.delivery.cursors, settings,
                             DiscordTuning(ready_timeout=0.05, identify_delay=0.0,
                                           retry_base_s=0.01))
    running = asyncio.create_task(adapter.start(TOKEN))
    try:
        await asyncio.wait_for(adapter.serving.wait(), 10)
        yield adapter
    finally:
        await adapter.close()
        await asyncio.gather(running, return_exceptions=True)


async def reply_in(fake: FakeDiscord, channel: int, count: int = 1) -> list[str]:
    """The bot's messages in a channel once there are ``count``, none still being written
    (a live reply's partial text ends with "…" until its final edit)."""
    def done() -> bool:
        sent = fake.sent_to(channel)
        return len(sent) >= count and not any(m["content"].endswith("\u2026") for m in sent)

    found = await fake.wait_for(done)
    assert found
    return [m["content"] for m in fake.sent_to(channel)]


async def test_a_document_is_read_from_its_url_once_and_its_text_used(
        discord_fake: FakeDiscord, tmp_path: Path) -> None:
    async with serving(discord_fake, tmp_path / "home"):
        pdf = discord_fake.attachment(pdf_with_text(["Wifi password: Blue-Falcon-7"]),
                                      "wifi.pdf", "application/pdf")
        discord_fake.push_message("remember this", attachments=[pdf])
        [reply] = await reply_in(discord_fake, discord_fake.dm_channel_id(OWNER_ID))
    assert reply.startswith("Saved to your notes: this")
    assert "Wifi password: Blue-Falcon-7" in reply
    assert discord_fake.downloads[pdf["id"]] == 1


async def test_an_attachment_without_text_is_answered_and_a_sticker_says_what_it_can_take(
        discord_fake: FakeDiscord, tmp_path: Path) -> None:
    async with serving(discord_fake, tmp_path / "home"):
        clip = discord_fake.attachment(b"\0" * 50, "clip.mp4", "video/mp4")
        discord_fake.push_message("", attachments=[clip])
        [reply] = await reply_in(discord_fake, discord_fake.dm_channel_id(OWNER_ID))
    assert reply.startswith("I can't take videos yet, so I skipped it.")
    assert "I can take text, photos, voice notes and audio" in reply
    assert discord_fake.downloads[clip["id"]] == 0


async def test_a_discord_voice_message_is_transcribed(discord_fake: FakeDiscord,
                                                     tmp_path: Path) -> None:
    async with FakeOpenAIServer() as whisper, serving(
            discord_fake, tmp_path / "home", FRONTDESK_TRANSCRIBE_BASE_URL=whisper.base_url):
        whisper.transcript_text = "remember that the bins go out on Tuesday"
        voice = discord_fake.attachment(voice_note(), "voice-message.ogg", "audio/ogg",
                                        flags=VOICE_MESSAGE_FLAG)
        discord_fake.push_message("", attachments=[voice])
        [reply] = await reply_in(discord_fake, discord_fake.dm_channel_id(OWNER_ID))
        [upload] = whisper.transcriptions
    assert upload.file_name == "voice-message.ogg" and upload.data == voice_note()
    assert reply.startswith('🎤 "remember that the bins go out on Tuesday"')
    assert "Saved to your notes: the bins go out on Tuesday" in reply


async def test_an_attachment_over_the_limit_is_not_downloaded(discord_fake: FakeDiscord,
                                                              tmp_path: Path) -> None:
    async with serving(discord_fake, tmp_path / "home"):
        big = discord_fake.attachment(b"x", "scan.pdf", "application/pdf",
                                      size=25 * 1024 * 1024)
        discord_fake.push_message("please read", attachments=[big])
        [reply] = await reply_in(discord_fake, discord_fake.dm_channel_id(OWNER_ID))
    assert reply.startswith("scan\\.pdf is too big for me (25.0 MB; I take files up to 20 MB).")
    assert discord_fake.downloads[big["id"]] == 0

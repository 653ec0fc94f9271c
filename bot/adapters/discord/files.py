"""Discord attachments as typed ``Attachment``s, and fetching them with discord.py.

A message's attachments keep their file name, content type, declared size and URL (the
platform reference). Fetching goes through discord.py's ``Attachment.read`` (a GET of the
attachment URL on discord.py's own HTTP session); after a restart the ``Attachment`` is
rebuilt from what the inbox kept. The kind comes from the content type (a Discord voice
message is an ``audio/ogg`` attachment with the voice-message flag); stickers and polls are
parts naming their kind, so the sender is told what the bot can take.
"""

from __future__ import annotations

import mimetypes
from typing import Any

import discord

from bot.adapters.base import Attachment, kind_of


def attachments_of(message: discord.Message) -> tuple[Attachment, ...]:
    """The message's files (and stickers or a poll), as typed parts."""
    found: list[Attachment] = []
    for item in message.attachments:
        mime = (item.content_type or mimetypes.guess_type(item.filename)[0] or "")
        mime = mime.split(";")[0].strip()
        found.append(Attachment(kind_of(mime, voice=item.is_voice_message()), mime, item.size,
                                item.filename, item.url))
    if message.stickers:
        found.append(Attachment("sticker"))
    if getattr(message, "poll", None) is not None:
        found.append(Attachment("poll"))
    return tuple(found)


async def fetch(state: Any, attachment: Attachment) -> bytes:
    """The bytes of an attachment, read by discord.py from its URL (``bot.media.attachments``
    checks the size limit, declared and read, as for every platform)."""
    payload: Any = {"id": 0, "filename": attachment.file_name or "file",
                    "size": attachment.size or 0, "url": attachment.ref,
                    "proxy_url": attachment.ref, "content_type": attachment.mime_type}
    data: bytes = await discord.Attachment(data=payload, state=state).read()
    return data

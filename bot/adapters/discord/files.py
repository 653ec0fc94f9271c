"""Discord attachments as typed ``Attachment``s, and fetching them with discord.py.

A message's attachments keep their file name, content type, declared size and URL (the
platform reference). Fetching streams the attachment URL and stops at the byte limit
(``bot.media.download``): discord.py's ``Attachment.read`` reads the whole body first,
whatever size the attachment declared. The URL is all it needs, so after a restart the
inbox's record is enough. The kind comes from the content type (a Discord voice
message is an ``audio/ogg`` attachment with the voice-message flag); stickers and polls are
parts naming their kind, so the sender is told what the bot can take. ``upload`` turns a
file a reply carries into the ``discord.File`` one send posts (discord.py uploads it as the
multipart ``files[0]``; Discord infers the content type from the name).
"""

from __future__ import annotations

import io
import mimetypes

import discord
import httpx

from bot.media.download import download_capped
from bot.messages import Attachment, OutgoingFile, kind_of

UNDECLARED_CAP = 25 * 1024 * 1024  # above what Discord takes without a subscription


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


async def fetch(state: object, attachment: Attachment, max_bytes: int | None = None) -> bytes:
    """The bytes of an attachment, read from its URL and stopped past ``max_bytes``
    (``FileTooLarge``); without it, past the size the attachment declared (Discord's sizes
    are exact: more bytes than declared is a lie), or ``UNDECLARED_CAP``. A network failure
    or a 5xx is a ``ConnectionError``, which the adapter tries again. ``state`` is unused
    (the URL is enough) and kept for the adapter's call."""
    limit = max_bytes if max_bytes is not None else (
        attachment.size if attachment.size is not None else UNDECLARED_CAP)
    try:
        return await download_capped(attachment.ref, limit)
    except httpx.TransportError as failed:
        raise ConnectionError(type(failed).__name__) from None
    except httpx.HTTPStatusError as refused:
        if refused.response.status_code < 500:
            raise
        raise ConnectionError(f"HTTP {refused.response.status_code}") from None


def upload(file: OutgoingFile) -> discord.File:
    """A fresh ``discord.File`` of the bytes (one per try: discord.py reads it as it posts)."""
    return discord.File(io.BytesIO(file.data), filename=file.name)

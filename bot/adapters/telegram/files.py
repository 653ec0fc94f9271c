"""Telegram's photos, voice notes, audio and documents as typed ``Attachment``s, and fetching them.

``attachments_of(message)`` reads what a message carries besides text: the largest size of a
photo, a voice note, an audio file, a document (an image sent as a file counts as a photo),
and, for the kinds Frontdesk does not read, a part naming the kind (a sticker, a location, a
contact, a poll, a video, a video note), so the sender is told what the bot can take.
``fetch(bot, attachment, max_bytes)`` uses PTB's ``get_file``, then downloads the file URL (the
``Bot``'s ``base_file_url``, ``TELEGRAM_BASE_FILE_URL``, plus the token) as a stream that stops
at ``max_bytes`` (``bot.media.download``): PTB's ``download_as_bytearray`` reads the whole body
first, whatever size the file declared.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from telegram import Bot, Message
from telegram.error import BadRequest

from bot.media.attachments import FileTooLarge
from bot.media.download import download_capped
from bot.messages import IMAGE_TYPES, Attachment

DEFAULT_BASE_FILE_URL = "https://api.telegram.org/file/bot"
# Telegram's own kinds we do not read, by the Message attribute that carries them.
UNREAD_KINDS = (("sticker", "sticker"), ("location", "location"), ("venue", "location"),
                ("contact", "contact"), ("poll", "poll"), ("video", "video"),
                ("video_note", "video"), ("animation", "video"), ("dice", "other"),
                ("game", "other"))


def base_file_url(base_file: str | None, base: str | None) -> str:
    """``TELEGRAM_BASE_FILE_URL``; else derived from a ``TELEGRAM_BASE_URL`` ending in
    ``/bot`` (a self-hosted Bot API server serves files at ``/file/bot``); else Telegram's."""
    if base_file:
        return base_file
    if base and base.rstrip("/").endswith("/bot"):
        return base.rstrip("/")[: -len("/bot")] + "/file/bot"
    return DEFAULT_BASE_FILE_URL


def attachments_of(message: Message) -> tuple[Attachment, ...]:
    """The message's files (and the unread kinds it carries), as typed parts."""
    found: list[Attachment] = []
    if message.photo:
        largest = max(message.photo, key=lambda size: size.width * size.height)
        found.append(Attachment("photo", "image/jpeg", largest.file_size, "photo.jpg",
                                largest.file_id))
    if message.voice is not None:
        voice = message.voice
        found.append(Attachment("voice", voice.mime_type or "audio/ogg", voice.file_size,
                                "voice.oga", voice.file_id))
    if message.audio is not None:
        audio = message.audio
        found.append(Attachment("audio", audio.mime_type or "audio/mpeg", audio.file_size,
                                audio.file_name or "audio.mp3", audio.file_id))
    if message.document is not None:
        document = message.document
        mime = document.mime_type or ""
        kind = ("photo" if mime in IMAGE_TYPES
                else "audio" if mime.startswith("audio/") else "document")
        found.append(Attachment(kind, mime, document.file_size, document.file_name or "",
                                document.file_id))
    for attribute, kind in UNREAD_KINDS:
        if getattr(message, attribute, None) and not any(p.kind == kind for p in found):
            found.append(Attachment(kind))
    return tuple(found)


async def fetch(bot: Bot, attachment: Attachment, max_bytes: int) -> bytes:
    """The file's bytes through getFile and the file URL; ``FileTooLarge`` past the limit."""
    try:
        file = await bot.get_file(attachment.ref)
    except BadRequest as refused:  # "file is too big": over what the Bot API hands out
        if "too big" not in refused.message.lower():
            raise
        raise FileTooLarge(attachment.size or max_bytes + 1) from None
    if file.file_size is not None and file.file_size > max_bytes:
        raise FileTooLarge(file.file_size)
    if not file.file_path:
        raise LookupError("Telegram gave no file path")
    if not file.file_path.startswith(("http://", "https://")):  # a local Bot API server's disk
        return _read_local(Path(file.file_path), max_bytes)
    return await download_capped(_encoded(file.file_path), max_bytes)


def _encoded(url: str) -> str:
    """The file URL with its path percent-encoded (a file path may hold any character)."""
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path=quote(parts.path)))


def _read_local(path: Path, max_bytes: int) -> bytes:
    with path.open("rb") as file:
        data = file.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise FileTooLarge(None)
    return data

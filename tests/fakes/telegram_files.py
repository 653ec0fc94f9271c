"""The Bot API's files for the fake Telegram server: media updates, ``getFile``, downloads.

Mixed into ``FakeTelegramServer``. ``push_photo`` / ``push_voice`` / ``push_document`` /
``push_kind`` queue a user's message carrying a file (or a sticker, location, …) the way
Telegram sends it: a ``file_id`` and the declared ``file_size``. ``getFile`` answers the
file's ``file_path`` (Telegram's own 400 "file is too big" past 20 MB), and the bytes are
served at ``/file/bot<token>/<file_path>``, which is what python-telegram-bot builds from its
``base_file_url`` (``server.base_file_url``). ``downloads`` counts the downloads per file id.
``sendDocument`` takes the bot's multipart upload (the ``document`` field: its file name,
content type and bytes, kept as the message's ``document``) with a caption of at most 1,024
characters after HTML parsing, as Telegram does.
"""

from __future__ import annotations

import itertools
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.fakes.telegram_html import ApiError, parse_html, utf16_len

JSON = dict[str, Any]
BOT_API_DOWNLOAD_LIMIT = 20 * 1024 * 1024
CAPTION_LIMIT = 1024


@dataclass(frozen=True)
class UploadedFile:
    """A file the bot uploaded in a multipart request, as the server received it."""

    file_name: str
    content_type: str
    data: bytes


class TelegramFiles:
    """File storage and the file methods; the host class gives the lock, chats and queue."""

    _lock: Any
    token: str
    url: str
    _messages: dict[tuple[int, int], JSON]

    def init_files(self) -> None:
        self.files: dict[str, tuple[str, bytes]] = {}  # file_id -> (file_path, bytes)
        self.downloads: Counter[str] = Counter()
        self._file_numbers = itertools.count(1)

    @property
    def base_file_url(self) -> str:
        """python-telegram-bot's ``base_file_url`` (and TELEGRAM_BASE_FILE_URL)."""
        return f"{self.url}/file/bot"

    def file_routes(self) -> list[web.RouteDef]:
        return [web.get("/file/bot{token}/{file_path:.+}", self._download)]

    # -- test controls --------------------------------------------------------------------
    def store_file(self, data: bytes, folder: str, suffix: str) -> JSON:
        """Keep a file as Telegram would; its ids and size, as in a message."""
        with self._lock:
            number = next(self._file_numbers)
            file_id = f"AgAD{number:04d}{folder}"
            self.files[file_id] = (f"{folder}/file_{number}{suffix}", data)
            return {"file_id": file_id, "file_unique_id": f"u{number}", "file_size": len(data)}

    def push_photo(self, chat_id: int, user_id: int, data: bytes, *, caption: str | None = None,
                   width: int = 1280, height: int = 960, chat_type: str = "private") -> JSON:
        """A photo in two sizes (a thumbnail and the full one), as Telegram sends it."""
        full = self.store_file(data, "photos", ".jpg")
        thumb = self.store_file(data[:64], "photos", ".jpg")
        sizes = [{**thumb, "width": 90, "height": 68}, {**full, "width": width, "height": height}]
        return self.push_media(chat_id, user_id, {"photo": sizes}, caption, chat_type)

    def push_voice(self, chat_id: int, user_id: int, data: bytes, *, duration: int = 3,
                   declared_size: int | None = None) -> JSON:
        """A voice note (Telegram stores them as ``.oga``)."""
        voice = {**self.store_file(data, "voice", ".oga"), "duration": duration,
                 "mime_type": "audio/ogg"}
        if declared_size is not None:
            voice["file_size"] = declared_size
        return self.push_media(chat_id, user_id, {"voice": voice})

    def push_document(self, chat_id: int, user_id: int, data: bytes, file_name: str,
                      mime_type: str, *, caption: str | None = None,
                      declared_size: int | None = None, chat_type: str = "private") -> JSON:
        """A file sent as a document, with the sender's file name."""
        document = {**self.store_file(data, "documents", ""), "file_name": file_name,
                    "mime_type": mime_type}
        if declared_size is not None:
            document["file_size"] = declared_size
        return self.push_media(chat_id, user_id, {"document": document}, caption, chat_type)

    def push_kind(self, chat_id: int, user_id: int, kind: str) -> JSON:
        """A sticker, location, contact, poll or video message (no text)."""
        bodies: dict[str, JSON] = {
            "sticker": {"file_id": "CAAD1", "file_unique_id": "s1", "width": 512,
                        "height": 512, "is_animated": False, "is_video": False,
                        "type": "regular", "emoji": "👍"},
            "location": {"latitude": 48.2, "longitude": 16.37},
            "contact": {"phone_number": "+43123", "first_name": "Ann"},
            "poll": {"id": "p1", "question": "Lunch?", "options": [
                {"text": "yes", "voter_count": 0, "persistent_id": "o1"},
                {"text": "no", "voter_count": 0, "persistent_id": "o2"}],
                "total_voter_count": 0, "is_closed": False, "is_anonymous": True,
                "type": "regular", "allows_multiple_answers": False, "allows_revoting": False,
                "members_only": False},
            "video": {"file_id": "BAAD1", "file_unique_id": "v1", "width": 640, "height": 480,
                      "duration": 5},
        }
        return self.push_media(chat_id, user_id, {kind: bodies[kind]})

    def push_media(self, chat_id: int, user_id: int, media: JSON, caption: str | None = None,
                   chat_type: str = "private") -> JSON:
        """Queue a user's message with ``media`` fields (and a caption)."""
        with self._lock:
            chat = self.add_chat(chat_id, chat_type)  # type: ignore[attr-defined]
            user = {"id": user_id, "is_bot": False, "first_name": f"User {user_id}",
                    "username": f"user{user_id}"}
            message: JSON = {"message_id": self._next_message_id(chat_id),  # type: ignore[attr-defined]
                             "from": user, "chat": chat, "date": int(time.time()), **media}
            if caption is not None:
                message["caption"] = caption
            self._messages[(chat_id, message["message_id"])] = message
            return self._queue({"message": message})  # type: ignore[attr-defined,no-any-return]

    # -- the Bot API ------------------------------------------------------------------------
    async def _api_senddocument(self, params: JSON) -> JSON:
        from tests.fakes.telegram_server import SentMessage, _check_markup

        upload = params.get("document")
        if not isinstance(upload, UploadedFile):  # a file_id or URL: not what the bot sends
            raise ApiError(400, "Bad Request: wrong file identifier/HTTP URL specified")
        caption, raw = self._caption(params)
        with self._lock:
            chat = self._chat(params)  # type: ignore[attr-defined]
            markup = _check_markup(params.get("reply_markup"))
            stored = self.store_file(upload.data, "documents", "")
            document = {**stored, "file_name": upload.file_name, "mime_type": upload.content_type}
            message: JSON = {"message_id": self._next_message_id(chat["id"]),  # type: ignore[attr-defined]
                             "from": self.bot_user, "chat": chat,  # type: ignore[attr-defined]
                             "date": int(time.time()), "document": document}
            if caption:
                message["caption"] = caption
            if markup is not None and "inline_keyboard" in markup:
                message["reply_markup"] = markup
            self._messages[(chat["id"], message["message_id"])] = message
            self.sent.setdefault(chat["id"], []).append(SentMessage(  # type: ignore[attr-defined]
                chat["id"], message["message_id"], caption, raw, params.get("parse_mode"), [],
                message.get("reply_markup"), history=[caption], document=upload))
        return message

    @staticmethod
    def _caption(params: JSON) -> tuple[str, str]:
        """The caption as shown, and as sent; Telegram's 400s for a bad or long one."""
        raw = str(params.get("caption") or "")
        mode = str(params.get("parse_mode") or "").lower()
        if mode and mode != "html":
            raise ApiError(400, f"Bad Request: unsupported parse_mode {params['parse_mode']}")
        shown = parse_html(raw)[0] if mode else raw
        if utf16_len(shown) > CAPTION_LIMIT:
            raise ApiError(400, "Bad Request: message caption is too long")
        return shown, raw

    async def _api_getfile(self, params: JSON) -> JSON:
        with self._lock:
            found = self.files.get(str(params.get("file_id")))
        if found is None:
            raise ApiError(400, "Bad Request: invalid file_id")
        path, data = found
        if len(data) > BOT_API_DOWNLOAD_LIMIT:
            raise ApiError(400, "Bad Request: file is too big")
        return {"file_id": params["file_id"], "file_unique_id": "u", "file_size": len(data),
                "file_path": path}

    async def _download(self, request: web.Request) -> web.Response:
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        with self._lock:
            for file_id, (path, data) in self.files.items():
                if path == request.match_info["file_path"]:
                    self.downloads[file_id] += 1
                    self._notify()  # type: ignore[attr-defined]
                    return web.Response(body=data)
        return web.Response(status=404)

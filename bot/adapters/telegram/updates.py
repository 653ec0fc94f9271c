"""Read one raw Telegram update: a message for the gateway, a button press, or nothing.

Each update is read on its own (``Update.de_json`` on one dict, then its text and entities),
so one malformed update (a caption that is not text, a lone surrogate, an entity offset inside
a surrogate pair) comes back as ``Unreadable``, to be marked failed and confirmed, instead of
stalling the batch it came in. In a group the bot answers
only when it is addressed: mentioned by ``@username`` (or a text mention), replied to, or sent
a command (``/help`` or ``/help@this_bot``); the mention is taken out of the text it reads.
"""

from __future__ import annotations

import logging
import re
from dataclasses import asdict, dataclass
from typing import Any

from telegram import Bot, Message, MessageEntity, Update, User
from telegram.constants import ChatType

from bot.adapters.telegram.files import attachments_of
from bot.messages import IncomingMessage

log = logging.getLogger(__name__)
PLATFORM = "telegram"
ALLOWED_UPDATES = ["message", "callback_query"]


@dataclass(frozen=True)
class Press:
    """An inline-button press, with what the adapter needs to answer it and edit the message."""

    update_id: int
    query_id: str
    user_id: str
    data: str
    chat_id: str | None  # None when Telegram no longer shows the message (too old)
    message_id: int | None
    message_html: str  # the pressed message as HTML, to edit the decision into it

    def to_json(self) -> dict[str, Any]:
        """A plain dict, kept until the press is handled (it survives a restart)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Press:
        """Rebuild a press recorded by ``to_json``."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


@dataclass(frozen=True)
class Unreadable:
    """An update that could not be read, keyed as well as it allows, and why."""

    update_id: int | None
    chat_id: str
    message_id: str
    user_id: str
    reason: str

    @classmethod
    def of(cls, raw: dict[str, Any], error: Exception) -> Unreadable:
        """What can be told of a malformed update without trusting any of it."""
        def part(value: Any) -> dict[str, Any]:
            return value if isinstance(value, dict) else {}

        update_id = raw.get("update_id") if isinstance(raw.get("update_id"), int) else None
        message = part(raw.get("message"))
        chat, sender = part(message.get("chat")), part(message.get("from"))
        return cls(update_id, str(chat.get("id", "?")),
                   str(message.get("message_id", f"update:{update_id}")),
                   str(sender.get("id", "?")), f"{type(error).__name__}: {error}"[:300])


def parse_update(raw: dict[str, Any], bot: Bot,
                 me: User) -> IncomingMessage | Press | Unreadable | None:
    """What one raw update asks of Frontdesk; None for anything it does not answer."""
    try:
        update = Update.de_json(raw, bot)
        if update.callback_query is not None:
            return _press(update)
        if update.message is not None:
            return _message(update.message, me)
        return None
    except Exception as exc:  # a malformed update must not stall the ones after it
        return Unreadable.of(raw, exc)


def _press(update: Update) -> Press | None:
    query = update.callback_query
    if query is None or query.data is None:
        return None
    message = query.message if isinstance(query.message, Message) else None
    return Press(update_id=update.update_id, query_id=str(query.id),
                 user_id=str(query.from_user.id), data=query.data,
                 chat_id=str(message.chat.id) if message else None,
                 message_id=message.message_id if message else None,
                 message_html=(message.text_html or "") if message and message.text else "")


def _message(message: Message, me: User) -> IncomingMessage | None:
    text = message.text if message.text is not None else message.caption
    if text is not None and not isinstance(text, str):
        raise ValueError(f"its text is a {type(text).__name__}")
    text = text or ""
    files = attachments_of(message)  # photos, voice, documents: answered too, never silent
    sender = message.from_user
    if not (text or files) or sender is None or sender.is_bot:
        return None
    is_private = message.chat.type == ChatType.PRIVATE
    if not is_private:
        addressed, text = _addressed(message, text, me)
        if not addressed or not (text or files):
            return None
    name = sender.full_name or sender.username or str(sender.id)
    return IncomingMessage(PLATFORM, str(message.chat.id), str(message.message_id),
                           str(sender.id), text, name, is_private, files,
                           user_handle=sender.username or "")


def _addressed(message: Message, text: str, me: User) -> tuple[bool, str]:
    """Whether a group message is meant for this bot, and its text without the mention."""
    replied = message.reply_to_message
    addressed = bool(replied and replied.from_user and replied.from_user.id == me.id)
    entities = (message.parse_entities() if message.text is not None
                else message.parse_caption_entities())
    handle = f"@{me.username}".lower() if me.username else None
    for entity, value in entities.items():
        mentioned = (value.lower() == handle if entity.type == MessageEntity.MENTION
                     else entity.type == MessageEntity.TEXT_MENTION
                     and entity.user is not None and entity.user.id == me.id)
        if mentioned:
            addressed = True
        elif entity.type == MessageEntity.BOT_COMMAND and entity.offset == 0:
            target = value.partition("@")[2]
            if target.lower() not in {"", (me.username or "").lower()}:
                return False, text  # a command for another bot in the group
            addressed = True
    if handle is not None:
        text = re.sub(rf"(?<![\w@]){re.escape(handle)}\b", " ", text, flags=re.IGNORECASE)
        text = re.sub(r"[ \t]{2,}", " ", text).strip()
    return addressed, text

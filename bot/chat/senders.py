"""Who is writing, as the workflows and the stores see a message: its run, sender and chat.

Plain functions of an ``IncomingMessage``: the one run id that answers it (the same after any
restart), the sender dict the workflows read, the memory scope of its author, the key of its
chat's history, and its text made storable.
"""

from __future__ import annotations

import hashlib
from typing import Any

from bot.messages import IncomingMessage


def run_id_for(msg: IncomingMessage) -> str:
    """The one run that answers this message: the same id after any restart."""
    key = f"{msg.platform}|{msg.chat_id}|{msg.message_id}".encode()
    return "m-" + hashlib.sha256(key).hexdigest()[:20]


def scope_of(msg: IncomingMessage, is_owner: bool) -> str:
    """Whose notes and reminders: the owner's, else this person's on this platform."""
    return "owner" if is_owner else f"{msg.platform}:{msg.user_id}"


def history_key(msg: IncomingMessage) -> str:
    """The chat history this message joins."""
    return f"{msg.platform}:chat:{msg.chat_id}"


def sender_of(msg: IncomingMessage, is_owner: bool) -> dict[str, Any]:
    """The plain-dict sender the workflows see."""
    return {"scope": scope_of(msg, is_owner), "is_owner": is_owner,
            "platform": msg.platform, "chat_id": msg.chat_id,
            "message_id": msg.message_id, "name": msg.user_name or msg.user_id}


def storable(text: str) -> str:
    """Text SQLite can store: a lone surrogate (a console's undecodable byte) becomes '?'."""
    return text.encode("utf-8", "replace").decode("utf-8")

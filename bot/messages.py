"""The messages and replies that pass between the chat platforms and the desk: the ground floor.

Every floor speaks these values: an adapter turns a platform update into an
``IncomingMessage`` and hands it to the desk's inbound port (``Inbound``: ``accept``, then
``process``; ``press`` for a button; ``attach`` when it starts serving), which the gateway
implements and the assembler hands to the adapter, so no adapter imports the chat layer. The
desk answers with a ``Reply`` (its ``Button``s, an ``OutgoingFile``) through the adapter's
outbound port (``bot.adapters.base``); a send that cannot succeed raises one of the delivery
exceptions below. Nothing here imports a chat library, or anything of ours (httpx keeps its
``Request``/``Response`` in ``_models.py`` below both its client and its transports the same
way).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, Protocol, TypeVar


class Undeliverable(Exception):
    """An adapter's ``send`` refusing a part for good (blocked, no such chat, refused text):
    sending it again cannot help, so the outbox marks it failed and goes on."""


class ChatMoved(Exception):
    """An adapter's ``send`` saying the platform moved the chat (a Telegram group upgraded to
    a supergroup): the outbox sends to ``chat_id`` instead, and remembers it."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(f"the chat moved to {chat_id}")
        self.chat_id = chat_id




class Flooded(Exception):
    """A live update (draft, partial message, edit) refused by the platform's flood control:
    nothing more should be written to that chat for ``retry_after`` seconds."""

    def __init__(self, retry_after: float) -> None:
        super().__init__(f"flood control: retry after {retry_after:g} s")
        self.retry_after = retry_after


class LiveRefused(Exception):
    """A draft or an edit the platform will not take here (drafts not offered in this chat, the
    message gone): the live reply shows its text another way, or leaves it to the final send."""




READABLE_KINDS = ("photo", "voice", "audio", "document")
UNREADABLE_KINDS = ("video", "sticker", "location", "contact", "poll", "other")

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/webp", "image/gif"})


def kind_of(mime_type: str, *, voice: bool = False) -> str:
    """The attachment kind for a file's content type (``voice``: the platform says so)."""
    if voice:
        return "voice"
    if mime_type in IMAGE_TYPES:
        return "photo"
    if mime_type.startswith("audio/"):
        return "audio"
    if mime_type.startswith("video/"):
        return "video"
    return "document"


@dataclass(frozen=True)
class Attachment:
    """One file (or other non-text part) of a message, as its platform declared it.

    ``ref`` is what the platform's adapter fetches it by (Telegram's ``file_id``, Discord's
    attachment URL, a console file's path); ``size`` is the declared size in bytes, None when
    the platform did not say. File names are the sender's: untrusted text.
    """

    kind: str  # one of READABLE_KINDS or UNREADABLE_KINDS
    mime_type: str = ""
    size: int | None = None
    file_name: str = ""
    ref: str = ""

    @classmethod
    def from_json(cls, data: Any) -> Attachment:
        """Rebuild one recorded by ``IncomingMessage.to_json``; ValueError when it is not."""
        if not isinstance(data, dict) or not isinstance(data.get("kind"), str):
            raise ValueError("an attachment is not a JSON object with a kind")
        size = data.get("size")
        if size is not None and (not isinstance(size, int) or isinstance(size, bool)):
            raise ValueError("an attachment's size is not a whole number")
        texts = {name: data.get(name, "") for name in ("mime_type", "file_name", "ref")}
        if not all(isinstance(value, str) for value in texts.values()):
            raise ValueError("an attachment's mime_type, file_name or ref is not text")
        return cls(kind=data["kind"], size=size, **texts)


@dataclass(frozen=True)
class IncomingMessage:
    """One message from one person in one chat, as any platform delivers it.

    ``text`` is what the sender typed (a caption, for a file); ``attachments`` its files.
    """

    platform: str  # "telegram" | "discord" | "console"
    chat_id: str
    message_id: str
    user_id: str
    text: str
    user_name: str = ""
    is_private: bool = True
    attachments: tuple[Attachment, ...] = ()
    user_handle: str = ""  # the platform's @username, when it has one (pairing shows it)
    # its answer is a draft the owner approves, never sent to the sender by itself
    # (an email guest outside the allowlist, a failed DMARC check, a Reply-To elsewhere)
    needs_approval: bool = False
    reply_to: str = ""  # where an approved answer goes instead of chat_id, when set

    def to_json(self) -> dict[str, Any]:
        """A plain dict for the inbox (recovery rebuilds the message from it)."""
        record = asdict(self)
        record["attachments"] = [asdict(part) for part in self.attachments]
        return record

    @classmethod
    def from_json(cls, data: Any) -> IncomingMessage:
        """Rebuild a message recorded by ``to_json``; ValueError when ``data`` is not one."""
        if not isinstance(data, dict):
            raise ValueError("the record is not a JSON object")
        values: dict[str, Any] = {}
        parts = data.get("attachments", [])  # records older than attachments have none
        if not isinstance(parts, list):
            raise ValueError("attachments is not a list")
        values["attachments"] = tuple(Attachment.from_json(part) for part in parts)
        for spec in fields(cls):
            if spec.name == "attachments":
                continue
            if spec.name not in data:
                if spec.default is MISSING:
                    raise ValueError(f"the record has no {spec.name}")
                continue
            wanted = str if spec.default is MISSING else type(spec.default)
            if not isinstance(data[spec.name], wanted):
                raise ValueError(f"{spec.name} is a {type(data[spec.name]).__name__}, "
                                 f"not a {wanted.__name__}")
            values[spec.name] = data[spec.name]
        return cls(**values)

    @classmethod
    def from_record(cls, payload: str) -> IncomingMessage:
        """Rebuild a message from the inbox's JSON text; ValueError when it is unreadable."""
        return cls.from_json(json.loads(payload))  # JSONDecodeError is a ValueError


@dataclass(frozen=True)
class Accepted:
    """A message the gateway has taken in, with its sender's access level, checked once."""

    message: IncomingMessage
    level: str | None  # 'owner', 'allowed', or None for a stranger (whose message is not kept)

    @property
    def is_owner(self) -> bool:
        return self.level == "owner"


@dataclass(frozen=True)
class Button:
    """An inline button: what it says, and the opaque token its press sends back."""

    label: str
    token: str


# Platforms that show no buttons (a mail): their choices are a numbered list in the reply's
# text, answered by writing the number or the choice's words (the chat's typed picks).
WITHOUT_BUTTONS = frozenset({"email"})


def numbered_choices(text: str, labels: list[str]) -> str:
    """``text``, then ``labels`` as a numbered list and how to answer it (no buttons)."""
    if not labels:
        return text
    listed = "\n".join(f"{number}. {label}" for number, label in enumerate(labels, 1))
    return (f"{text}\n\n{listed}\n\nReply with the number of your choice (or its words, "
            "for example the day and time).")


@dataclass(frozen=True)
class OutgoingFile:
    """A file a reply carries (a booked meeting's ``.ics``): its name, content type, bytes.

    In a run's state (plain JSON) it is ``to_json``'s dict, the bytes as base64.
    """

    name: str
    mime: str
    data: bytes

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "mime": self.mime,
                "data": base64.b64encode(self.data).decode("ascii")}

    @classmethod
    def from_json(cls, data: Any) -> OutgoingFile | None:
        """Rebuild one written by ``to_json``; None for anything else (no file)."""
        if not isinstance(data, dict) or not all(
                isinstance(data.get(key), str) for key in ("name", "mime", "data")):
            return None
        try:
            raw = base64.b64decode(data["data"], validate=True)
        except ValueError:
            return None
        return cls(data["name"], data["mime"], raw)


@dataclass(frozen=True)
class Reply:
    """What the gateway made of one message (``frontdesk chat --json`` prints these fields)."""

    text: str
    route: str  # quick_reply | full_agent | notify_now | loop | command | refused | ignored
    run_id: str | None = None
    model_calls: dict[str, int] = field(default_factory=lambda: {"small": 0, "big": 0})
    cost_usd: float = 0.0
    buttons: list[Button] = field(default_factory=list)
    file: OutgoingFile | None = None  # sent with the reply (caption or a part of its own)


@dataclass(frozen=True)
class PressResult:
    """The outcome of a button press: a short answer for the presser, and the message edit."""

    alert: str  # shown to whoever pressed (Telegram callback answer, Discord ephemeral)
    accepted: bool  # True when the press decided something
    edit_text: str | None = None  # new text of the message with the buttons, buttons removed



@dataclass(frozen=True)
class MenuCommand:
    """One chat command as a platform's command menu lists it (Telegram's menu, Discord's
    slash commands); the assembler hands the list to the adapters."""

    name: str
    description: str
    takes_text: bool = False  # Discord's slash command asks for the text it works on


# -- the inbound port ------------------------------------------------------------------------
AdapterT = TypeVar("AdapterT", contravariant=True)


class Inbound(Protocol[AdapterT]):
    """What an adapter calls on the desk (the gateway implements it; the assembler hands it
    over). ``AdapterT`` is the outbound port the desk answers through
    (``bot.adapters.base.Adapter``, a floor up, hence a type parameter here)."""

    def accept(self, msg: IncomingMessage) -> Accepted | None:
        """Check the sender once and record the message before any work; None for a
        re-delivery. An adapter that confirms receipt to its platform accepts, confirms, then
        processes."""
        ...

    async def process(self, accepted: Accepted, *, gather: bool = True) -> Reply | None:
        """Answer an accepted message (``gather``: a line may join its person's burst); None
        when the answer went out with another line of its burst."""
        ...

    def not_recorded(self, error: BaseException) -> None:
        """What the adapter took in could not be recorded (its own transaction failed: a full
        disk); it leaves it unconfirmed, so the platform sends it again."""
        ...

    def unreadable(self, platform: str, chat_id: str, message_id: str, user_id: str,
                   payload: Mapping[str, Any], reason: str) -> None:
        """Record an update that cannot be read as failed, so it is skipped, never retried."""
        ...

    async def press(self, platform: str, user_id: str, token: str,
                    press_id: str | None = None) -> PressResult:
        """A button press (``press_id``: the platform's id of it, to tell a replay)."""
        ...

    def handled(self, platform: str, chat_id: str, message_id: str) -> bool:
        """Whether a recorded message's turn is over: its answer handed to the outbox (for a
        message that ``needs_approval``, the owner's draft card), or it failed for good. The
        email adapter marks a mail ``\\Seen`` only then."""
        ...

    async def attach(self, adapter: AdapterT, *, recover: bool = True,
                     background: bool = False) -> None:
        """Start serving a platform: send what is owed to it, answer what is open."""
        ...

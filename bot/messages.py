"""The platform-neutral types that pass between the chat adapters and the gateway.

An adapter turns a platform update into an ``IncomingMessage`` and hands it to
``Gateway.handle`` (or to ``Gateway.accept``, which gives it back ``Accepted``, and later to
``Gateway.process``); the gateway answers through the adapter's ``send`` (one call per outbox
part). A button press comes in as ``Gateway.press`` and its ``PressResult`` says what to show.
Nothing here imports a chat library.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class IncomingMessage:
    """One message from one person in one chat, as any platform delivers it."""

    platform: str  # "telegram" | "discord" | "console"
    chat_id: str
    message_id: str
    user_id: str
    text: str
    user_name: str = ""
    is_private: bool = True

    def to_json(self) -> dict[str, Any]:
        """A plain dict for the inbox (recovery rebuilds the message from it)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> IncomingMessage:
        """Rebuild a message recorded by ``to_json``."""
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


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


@dataclass(frozen=True)
class Reply:
    """What the gateway made of one message (``frontdesk chat --json`` prints these fields)."""

    text: str
    route: str  # quick_reply | full_agent | notify_now | loop | command | refused | ignored
    run_id: str | None = None
    model_calls: dict[str, int] = field(default_factory=lambda: {"small": 0, "big": 0})
    cost_usd: float = 0.0
    buttons: list[Button] = field(default_factory=list)


@dataclass(frozen=True)
class PressResult:
    """The outcome of a button press: a short answer for the presser, and the message edit."""

    alert: str  # shown to whoever pressed (Telegram callback answer, Discord ephemeral)
    accepted: bool  # True when the press decided something
    edit_text: str | None = None  # new text of the message with the buttons, buttons removed


class Adapter(Protocol):
    """What the gateway needs from a chat platform."""

    platform: str

    def split(self, text: str) -> list[str]:
        """Cut a reply into parts the platform accepts (numbered, code blocks balanced)."""
        ...

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Send one part; return the platform's message id. Raise only after retries.

        ``key`` names the outbox part for good: a platform that can deduplicate a send by a
        client id (Discord's nonce) uses it, so a part re-sent after a crash shows once.
        """
        ...

    async def owner_chat(self) -> str | None:
        """The chat where the owner is reached directly (a DM), or None if none is set."""
        ...

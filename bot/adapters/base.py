"""The adapters' outbound port: what the desk needs from a chat platform to answer.

``Adapter`` sends a reply's parts (``send``, ``send_file``) and finds the owner's chat;
``LiveAdapter`` shows an answer while it is written (``bot.delivery.live``). The delivery
floor (``bot.delivery.outbox``) talks to these; the Telegram, Discord and console adapters
implement them, the console playing the part of the mock. What passes through them is the
ground floor's (``bot.messages``); what an adapter calls on the desk is ``bot.messages.Inbound``.
``AdapterCursors`` is where an adapter keeps its place (an update offset, the last message
seen), handed to it by the assembler.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol, runtime_checkable

from bot.messages import Button, OutgoingFile


class Adapter(Protocol):
    """What the gateway needs from a chat platform."""

    platform: str
    caption_limit: int  # characters of text a file may carry (longer: a part of its own)

    def split(self, text: str) -> list[str]:
        """Cut a reply into parts the platform accepts (numbered, code blocks balanced)."""
        ...

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Send one part; return the platform's message id. Raise only after retries:
        ``Undeliverable`` for a refusal for good, ``ChatMoved`` when the chat has moved.

        ``key`` names the outbox part for good: a platform that can deduplicate a send by a
        client id (Discord's nonce) uses it, so a part re-sent after a crash shows once.
        """
        ...

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        """Send one file as a document, with ``caption`` (a part's text, formatted as for
        ``send``, at most ``caption_limit`` characters; may be empty) and the buttons; the
        message id. Raises as ``send`` does; ``key`` as for ``send``."""
        ...

    async def owner_chat(self) -> str | None:
        """The chat where the owner is reached directly (a DM), or None if none is set."""
        ...



@runtime_checkable
class LiveAdapter(Protocol):
    """What a platform offers for live replies (``bot.delivery.live``), beside ``Adapter``.

    Partial texts go as plain text in one try each: a flood answer raises ``Flooded`` (after
    which the adapter's own sends to that chat wait it out too), a refusal ``LiveRefused``.
    ``edit(..., final=True)`` is the outbox delivering a part into a message shown live: the
    part's formatted text and buttons, retried like ``send``; an edit that changes nothing
    counts as done.
    """

    platform: str
    live_limit: int  # characters one partial message may show

    def live_mode(self, chat_id: str, private: bool) -> str | None:
        """"draft" (an ephemeral preview, then the final message), "edit" (a message that
        grows), or None (nothing shown before the final message)."""
        ...

    async def draft(self, chat_id: str, draft_id: int, text: str) -> None:
        """Show ``text`` as the chat's draft ``draft_id``."""
        ...

    async def post(self, chat_id: str, text: str) -> str:
        """Send a partial text as a new message; its id."""
        ...

    async def edit(self, chat_id: str, message_id: str, text: str,
                   buttons: list[Button] | None = None, *, final: bool = False) -> None:
        """Replace a message's text (``final``: with an outbox part, formatted, retried)."""
        ...

    async def delete(self, chat_id: str, message_id: str) -> None:
        """Remove a message shown live that the final answer does not need."""
        ...


class AdapterCursors(Protocol):
    """Where an adapter keeps its place, durably (``bot.delivery.cursors``)."""

    def get(self, name: str) -> str | None:
        """The value kept under ``name``, or None."""
        ...

    def set(self, name: str, value: str) -> None:
        """Keep ``value`` under ``name``."""
        ...

    def with_prefix(self, prefix: str) -> dict[str, str]:
        """Every name starting with ``prefix``, with its value."""
        ...

    def forget(self, names: list[str]) -> None:
        """Remove every one of ``names`` that is kept."""
        ...

    def together(self) -> AbstractContextManager[Any]:
        """One transaction: an adapter's batch of accepted messages and its new offset land
        all or nothing."""
        ...

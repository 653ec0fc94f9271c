"""What the desk and a reschedule both speak: the owner's notice."""

from __future__ import annotations

from typing import Protocol

from bot.messages import OutgoingFile


class TellOwner(Protocol):
    """A notice to the owner, once per outbox key, on the platform the request came from."""

    async def __call__(self, origin: str, key: str, text: str,
                      file: OutgoingFile | None = None) -> None: ...

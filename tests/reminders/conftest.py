"""Fixtures for the reminder tests: the whole gateway on the offline models with an injected clock.

A ``Desk`` is one process: services, gateway and a recording Telegram adapter on a real
SQLite file, with the reminders' and the scheduler's clock set by the test (``desk.at(...)``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from bot.app import App, assemble
from bot.chat.gateway import Gateway
from bot.messages import Reply
from bot.models import Models
from bot.models.offline import OfflineModel
from tests.support.harness import GUEST, OWNER, RecordingAdapter, make_settings

ZONE = ZoneInfo("Europe/Berlin")


class Clock:
    """A settable clock (UTC seconds)."""

    def __init__(self, moment: datetime) -> None:
        self.now = moment.timestamp()

    def __call__(self) -> float:
        return self.now

    def set(self, moment: datetime) -> None:
        self.now = moment.timestamp()


@dataclass
class Desk:
    """One process's services, gateway and adapter, on an injected clock."""

    services: App
    gateway: Gateway
    adapter: RecordingAdapter
    clock: Clock
    _ids: int = 0

    async def send(self, text: str, user: str = OWNER, chat: str | None = None) -> Reply:
        """One message from ``user`` (in their own chat unless ``chat``)."""
        self._ids += 1
        reply = await self.gateway.handle(_message(text, user, chat, f"{self._ids}-{text}"))
        assert reply is not None
        return reply

    def at(self, moment: datetime) -> None:
        """Move the clock."""
        self.clock.set(moment)


def _message(text: str, user: str, chat: str | None, message_id: str) -> Any:
    from bot.messages import IncomingMessage

    return IncomingMessage("telegram", chat or user, message_id, user, text, f"user{user}")


DeskFactory = Callable[..., Awaitable[Desk]]


def berlin(*args: int) -> datetime:
    """A local time in the test zone."""
    return datetime(*args, tzinfo=ZONE)  # type: ignore[misc]


@pytest.fixture
def make_desk(tmp_path: Path) -> DeskFactory:
    """``await make_desk(now, **env)``: a started desk whose clock reads ``now``."""

    async def build(now: datetime, **env: str) -> Desk:
        settings = make_settings(tmp_path / "home", FRONTDESK_TIMEZONE="Europe/Berlin", **env)
        models = Models(small=OfflineModel(role="small"), big=OfflineModel(role="big"))
        services = assemble(settings, models=models)
        clock = Clock(now)
        services.reminders.store.clock = clock
        services.timer.clock = clock
        services.timer.started_at = clock()
        gateway = services.chat.gateway
        await gateway.start()
        adapter = RecordingAdapter()
        await gateway.attach(adapter)
        return Desk(services, gateway, adapter, clock)

    return build


__all__ = ["GUEST", "OWNER", "ZONE", "Clock", "Desk", "DeskFactory", "berlin"]

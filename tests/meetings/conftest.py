"""Fixtures for the meeting tests: the whole bot on a real database, a recording adapter that
keeps the buttons too, and the folder calendar (``fake_calendar``) as the owner's calendar."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, assemble
from bot.calendar.writer import BusyTime
from bot.messages import Button, PressResult, Reply
from bot.models import Models
from tests.meetings.fake_calendar import FolderCalendar
from tests.support.harness import (
    GUEST,
    OWNER,
    OWNER_CHAT,
    PurposeModel,
    RecordingAdapter,
    make_settings,
)

ALWAYS_OPEN = {"FRONTDESK_MEETING_HOURS": "Mon-Sun 08:00-20:00", "FRONTDESK_MEETING_NOTICE": "1"}
SECOND_GUEST = "300"


class ButtonAdapter(RecordingAdapter):
    """A recording adapter that also keeps each part's buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.buttons: list[tuple[str, str, list[Button]]] = []

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        self.buttons.append((chat_id, text, list(buttons or [])))
        return await super().send(chat_id, text, buttons, key=key)

    def last_buttons(self, chat_id: str) -> list[Button]:
        """The buttons of the last part sent to ``chat_id`` that had any."""
        return next(b for chat, _, b in reversed(self.buttons) if chat == chat_id and b)


async def instant(seconds: float) -> None:
    """The meetings' retry pause, made instant."""
    await asyncio.sleep(0)


@dataclass
class Desk:
    """One process: the services, the adapter and the calendar."""

    app: App
    adapter: ButtonAdapter
    calendar: FolderCalendar | None

    async def send(self, text: str, user: str = GUEST, message_id: str | None = None) -> Reply:
        from tests.support.harness import Harness

        msg = Harness.message(None, text, user, message_id=message_id,  # type: ignore[arg-type]
                              name="Bob *bold*" if user == GUEST else f"user{user}")
        reply = await self.app.chat.gateway.handle(msg)
        assert reply is not None
        return reply

    async def press(self, button: Button, user: str) -> PressResult:
        return await self.app.chat.gateway.press("telegram", user, button.token)

    def to(self, chat: str) -> list[str]:
        return self.adapter.to(chat)

    def owner_texts(self) -> list[str]:
        return self.adapter.to(OWNER_CHAT)


DeskFactory = Callable[..., Awaitable[Desk]]


@pytest.fixture
def make_desk(tmp_path: Path) -> DeskFactory:
    """``await make_desk(caldav=True, **env)``: a started bot with the folder calendar."""

    async def build(caldav: bool = True, offline: bool = False, busy: BusyTime | None = None,
                    **env: Any) -> Desk:
        calendar = FolderCalendar(tmp_path / "calendar")
        settings = make_settings(tmp_path / "home", **{**ALWAYS_OPEN, **env,
                                 "TELEGRAM_ALLOWED_USERS": f"{GUEST},{SECOND_GUEST}"})
        models = None if offline else Models(small=PurposeModel("small"),
                                             big=PurposeModel("big"))
        app = assemble(settings, models=models,
                       meeting_writer=calendar if caldav else None, meeting_busy=busy or calendar,
                       sleep=instant)
        await app.chat.gateway.start()
        adapter = ButtonAdapter()
        await app.chat.gateway.attach(adapter)
        return Desk(app, adapter, calendar)

    return build


__all__ = ["GUEST", "OWNER", "OWNER_CHAT", "SECOND_GUEST", "ButtonAdapter", "Desk"]

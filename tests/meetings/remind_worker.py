"""A worker for the meeting-reminder crash tests: the whole bot (gateway, outbox, reminder
timer) on a real database and the folder calendar, with the default lead times (``1d,15m``)
and a Jitsi link.

Usage: ``python remind_worker.py DB FOLDER MODE``. The worker's clock is the real one moved
by a fixed shift, kept in ``FOLDER/shift`` so every process of a test lives on the same
timeline: the first puts "now" ``LEAD_S`` seconds before a meeting's 15-minute reminder, so
the reminder fires a few real seconds later (no test waits 15 minutes), and the 1-day lead is
already past at booking. Every part sent, in every process, is appended to ``FOLDER/sent.log``
(one JSON line, fsync'd: it survives SIGKILL). Modes:

- ``book``: /meet, pick the slot at ``FOLDER/shift``'s meeting time, the owner approves;
  print the meeting and its reminders (the timer does not run);
- ``book-cancel``: the same, then the guest cancels from /meetings;
- ``book-move``: book 10:15 instead, then the guest reschedules to 10:00 from /meetings and
  the owner approves;
- ``idle``: run the timer; ready at once (the test kills it before the reminders' time);
- ``hang-before-advance``: run the timer; once the first reminder is sent and recorded,
  hang before it moves on (ready);
- ``until-sent``: run the timer until both reminders are sent, tick once more, print;
- ``drain``: start as after a crash, tick once, print.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

LEAD_S = 8.0  # real seconds from the first start to the 15-minute reminders' time
FOLDER = Path(sys.argv[2])
REAL_TIME = time.time


def meeting_start() -> datetime:
    """The meeting the guest picks: 10:00 UTC tomorrow, on the quarter-hour grid."""
    day = datetime.fromtimestamp(REAL_TIME(), UTC).date() + timedelta(days=1)
    return datetime(day.year, day.month, day.day, 10, tzinfo=UTC)


def load_shift() -> float:
    """The clock's shift, chosen by the first process (then kept: one timeline)."""
    path = FOLDER / "shift"
    if not path.exists():
        due = meeting_start() - timedelta(minutes=15)
        path.write_text(repr(due.timestamp() - LEAD_S - REAL_TIME()))
    return float(path.read_text())


SHIFT = load_shift()
time.time = lambda: REAL_TIME() + SHIFT  # before the bot is imported: its clocks read this

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
# The bot is imported only now (E402): its clocks' defaults must bind the shifted time.

from bot.app import App, assemble  # noqa: E402
from bot.messages import Button, IncomingMessage, OutgoingFile  # noqa: E402
from bot.reminders.store import Reminder  # noqa: E402
from tests.meetings.conftest import ButtonAdapter  # noqa: E402
from tests.meetings.fake_calendar import FolderCalendar  # noqa: E402
from tests.support.crashing import say_ready  # noqa: E402
from tests.support.harness import GUEST, OWNER, make_settings  # noqa: E402

SETTINGS = {"FRONTDESK_MEETING_HOURS": "Mon-Sun 08:00-20:00", "FRONTDESK_MEETING_NOTICE": "0",
            "FRONTDESK_MEETING_MINUTES": "15", "FRONTDESK_MEETING_LINK": "jitsi",
            "FRONTDESK_MEETING_REMIND": "1d,15m"}


class LoggingAdapter(ButtonAdapter):
    """Appends each part it sends to ``sent.log``, durably."""

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        with open(FOLDER / "sent.log", "a", encoding="utf-8") as log:
            log.write(json.dumps({"t": time.time(), "chat": chat_id, "text": text}) + "\n")
            log.flush()
            os.fsync(log.fileno())
        return await super().send(chat_id, text, buttons, key=key)

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        return await self.send(chat_id, caption or f"(file {file.name})", buttons, key=key)

    async def owner_chat(self) -> str:
        """As on Telegram: the owner's private chat has the owner's user id."""
        return OWNER


def sent() -> list[dict[str, Any]]:
    path = FOLDER / "sent.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def reminders_sent() -> list[dict[str, Any]]:
    return [part for part in sent() if "Reminder:" in part["text"]]


async def pick(app: App, adapter: LoggingAdapter, buttons: list[Button], start: datetime) -> None:
    """The guest presses the offered time starting at ``start``; the owner approves."""
    gateway = app.chat.gateway
    offered = next(m for m in app.meetings.store.listing(status="offered"))
    slots = app.flows.runs.load(offered.run_id).get("slots")
    index = next(i for i, s in enumerate(slots) if datetime.fromisoformat(s["start"]) == start)
    assert (await gateway.press("telegram", GUEST, buttons[index].token)).accepted
    approve = next(b for b in adapter.last_buttons(OWNER) if b.label == "Approve")
    assert (await gateway.press("telegram", OWNER, approve.token)).accepted


async def from_meetings(app: App, label: str) -> None:
    """The guest presses ``label`` (Cancel, Reschedule) under their /meetings listing."""
    gateway = app.chat.gateway
    listing = await gateway.handle(IncomingMessage("telegram", GUEST, f"{label}-1", GUEST,
                                                   "/meetings", "Bob"))
    assert listing is not None
    button = next(b for b in listing.buttons if b.label.startswith(label))
    assert (await gateway.press("telegram", GUEST, button.token)).accepted


async def book(app: App, adapter: LoggingAdapter, mode: str) -> dict[str, Any]:
    gateway = app.chat.gateway
    offer = await gateway.handle(IncomingMessage("telegram", GUEST, "1", GUEST,
                                                 "/meet budget review", "Bob"))
    assert offer is not None and offer.buttons, offer
    # a move is booked a quarter later first: its old reminders would be due 15 minutes on
    first = meeting_start() + timedelta(minutes=15 if mode == "book-move" else 0)
    await pick(app, adapter, offer.buttons, first)
    if mode == "book-cancel":
        await from_meetings(app, "Cancel")
    if mode == "book-move":
        await from_meetings(app, "Reschedule")
        await pick(app, adapter, adapter.last_buttons(GUEST), meeting_start())
    [meeting] = app.meetings.store.listing(status="booked") or app.meetings.store.listing()
    return {"status": meeting.status, "uid": meeting.uid,
            "start": meeting.start.isoformat() if meeting.start else None,
            "due_at": (meeting_start() - timedelta(minutes=15)).timestamp() - SHIFT}


async def main(mode: str) -> None:
    calendar = FolderCalendar(FOLDER / "calendar")
    app = assemble(make_settings(FOLDER / "home", **SETTINGS), meeting_writer=calendar,
                   meeting_busy=calendar)
    if mode == "hang-before-advance":
        advance = app.reminders.store.advance

        def hang(reminder: Reminder, now: float) -> Reminder | None:
            say_ready(FOLDER)
            threading.Event().wait()  # the SIGKILL finds the process here
            return advance(reminder, now)

        app.reminders.store.advance = hang  # type: ignore[method-assign]
    gateway = app.chat.gateway
    await gateway.start()
    adapter = LoggingAdapter()
    await gateway.attach(adapter)
    result: dict[str, Any] = {}
    if mode.startswith("book"):
        result = await book(app, adapter, mode)
    elif mode == "drain":
        await app.timer.tick()
    else:
        timer = asyncio.create_task(app.timer.run())
        if mode == "idle":
            say_ready(FOLDER)
        deadline = time.monotonic() + 60
        while True:
            adapter.changed.clear()  # before the check: a part sent after it wakes the wait
            if len(reminders_sent()) >= 2 or time.monotonic() > deadline:
                break
            await asyncio.wait_for(adapter.changed.wait(), 60)
        await app.timer.tick()
        timer.cancel()
    result.update(reminders=reminders_sent(),
                  pending=[r.source for r in app.reminders.store.pending()])
    print(json.dumps(result))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[3]))

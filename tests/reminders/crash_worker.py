"""A worker for the reminder crash tests: the whole gateway and timer on a real database.

Usage: ``python crash_worker.py DB FOLDER MODE [SECONDS]``. Every part sent is appended to
``FOLDER/sent.log`` (one JSON line, fsync'd: it survives SIGKILL). Modes:

- ``set SECONDS``: set the owner's reminder "stretch" due SECONDS from now; print its id;
- ``idle``: start, attach, run the timer; ready at once (the test kills it before the time);
- ``hang-before-advance``: run the timer; once the occurrence is sent and recorded, hang
  before the reminder moves on (ready);
- ``hang-before-send``: run the timer; hang once the part is in the outbox, before the
  platform gets it (ready);
- ``until-sent``: run the timer until one part is sent, tick once more, print the log;
- ``drain``: start as after a crash, tick once, print the log.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.app import assemble
from bot.messages import Button
from bot.reminders.store import Reminder
from tests.support.crashing import say_ready
from tests.support.harness import OWNER, RecordingAdapter, make_settings


class LoggingAdapter(RecordingAdapter):
    """Appends each part it sends to ``sent.log``, durably; may hang first."""

    def __init__(self, folder: Path, hang: bool) -> None:
        super().__init__()
        self.folder, self.hang = folder, hang

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        if self.hang:
            say_ready(self.folder)
            threading.Event().wait()  # the SIGKILL finds the process here
        with open(self.folder / "sent.log", "a", encoding="utf-8") as log:
            log.write(json.dumps({"t": time.time(), "chat": chat_id, "text": text}) + "\n")
            log.flush()
            os.fsync(log.fileno())
        return await super().send(chat_id, text, buttons, key=key)


def sent(folder: Path) -> list[dict[str, Any]]:
    path = folder / "sent.log"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


async def main(folder: Path, mode: str, extra: str) -> None:
    services = assemble(make_settings(folder / "home",
                                                    FRONTDESK_TIMEZONE="Europe/Berlin"))
    if mode == "set":
        when = time.time() + float(extra)
        from datetime import datetime

        zone = services.owner.zone()
        reminder = services.reminders.store.add("owner", "telegram", OWNER, "stretch",
                                          datetime.fromtimestamp(when, zone), zone=zone)
        print(json.dumps({"id": reminder.id, "due_at": reminder.due_at}))
        return
    if mode == "hang-before-advance":
        advance = services.reminders.store.advance

        def hang(reminder: Reminder, now: float) -> Reminder | None:
            say_ready(folder)
            threading.Event().wait()
            return advance(reminder, now)

        services.reminders.store.advance = hang  # type: ignore[method-assign]
    gateway = services.chat.gateway
    await gateway.start()
    adapter = LoggingAdapter(folder, hang=mode == "hang-before-send")
    await gateway.attach(adapter)
    if mode == "drain":
        await services.timer.tick()
    else:
        timer = asyncio.create_task(services.timer.run())
        if mode == "idle":
            say_ready(folder)
        deadline = time.monotonic() + 60
        while not adapter.sent and time.monotonic() < deadline:
            await asyncio.wait_for(adapter.changed.wait(), 60)
        await services.timer.tick()
        timer.cancel()
    print(json.dumps({"sent": sent(folder),
                      "pending": [r.id for r in services.reminders.store.pending()]}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else ""))

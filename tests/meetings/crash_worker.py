"""A worker for the meeting crash tests: the whole bot on a real database and the folder
calendar, killed at one exact point of Book.

Usage: ``python crash_worker.py DB FOLDER MODE [TOKEN]``. The guest asks with /meet on the
(recording) Telegram adapter. Every part sent, in every process, is appended to
``FOLDER/sent.log`` (chat and first line; a file as ``chat|file|name``), so the test counts
across the crash. Modes:

- ``ask``: /meet, press the first slot, print the owner's Approve token;
- ``before`` / ``during`` / ``after`` TOKEN: press Approve and hang (for the SIGKILL) just
  before the event is written / once the calendar has written it but before the answer came
  back / once the booking is recorded, before the guest is told;
- ``restart``: start as after a crash (recovery, owed outcomes), print the calendar's events.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.app import assemble
from bot.messages import Button, IncomingMessage, OutgoingFile
from bot.models import Models
from tests.meetings.conftest import ALWAYS_OPEN, ButtonAdapter, instant
from tests.meetings.fake_calendar import FolderCalendar
from tests.support.crashing import log_ran, say_ready
from tests.support.harness import GUEST, OWNER, PurposeModel, make_settings


def hang(folder: Path) -> None:
    say_ready(folder)
    threading.Event().wait()  # the SIGKILL finds the process here


class CrashingCalendar(FolderCalendar):
    """The folder calendar, stopping the process at ``mode``'s point of ``create``."""

    def __init__(self, folder: Path, mode: str) -> None:
        super().__init__(folder / "calendar")
        self.mode, self.crash_folder = mode, folder

    async def create(self, uid: str, ics: bytes) -> bool:
        if self.mode == "before":
            hang(self.crash_folder)
        created = await super().create(uid, ics)
        log_ran(self.crash_folder, "created" if created else "create-existed")
        if self.mode == "during":
            hang(self.crash_folder)
        return created


class LoggingAdapter(ButtonAdapter):
    """Keeps every part in ``sent.log`` too, durably."""

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        log_ran(self.folder, f"{chat_id}|{text.splitlines()[0].replace(' ', '_')}")
        return await super().send(chat_id, text, buttons, key=key)

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        log_ran(self.folder, f"{chat_id}|file|{file.name}")
        return await super().send_file(chat_id, file, caption, buttons, key=key)

    async def owner_chat(self) -> str:
        """As on Telegram: the owner's private chat has the owner's user id."""
        return OWNER


async def main(folder: Path, mode: str, token: str) -> None:
    calendar = CrashingCalendar(folder, mode)
    settings = make_settings(folder / "home", **ALWAYS_OPEN)
    services = assemble(settings, models=Models(small=PurposeModel("small"),
                                                big=PurposeModel("big")),
                        meeting_writer=calendar, meeting_busy=calendar, sleep=instant)
    gateway = services.chat.gateway
    if mode == "after":
        deliver = gateway.outbox.deliver

        async def crash_before_outcome(platform: str, chat_id: str, key: str, text: str,
                                       buttons: Any = None, file: Any = None) -> None:
            if key.startswith("outcome:"):
                hang(folder)
            await deliver(platform, chat_id, key, text, buttons, file)

        gateway.outbox.deliver = crash_before_outcome  # type: ignore[method-assign]
    await gateway.start()
    adapter = LoggingAdapter(folder)
    await gateway.attach(adapter)
    if mode == "ask":
        offer = await gateway.handle(IncomingMessage("telegram", GUEST, "1", GUEST,
                                                     "/meet the budget", "Bob"))
        assert offer is not None and offer.buttons, offer
        await gateway.press("telegram", GUEST, offer.buttons[0].token)
        approve = next(b for b in adapter.last_buttons(OWNER) if b.label == "Approve")
        print(json.dumps({"token": approve.token}))
    elif mode in ("before", "during", "after"):
        await gateway.press("telegram", OWNER, token, "query-1")
        print(json.dumps({"finished": True}))  # reached only when no crash point was hit
    else:
        await asyncio.sleep(0)
        print(json.dumps({"events": calendar.ours(), "calls": calendar.calls(),
                          "meetings": [m.to_json() for m in services.meetings.store.listing()]}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else ""))

"""A worker for the press crash test: the whole gateway on a real database, killed mid-press.

Usage: ``python press_crash_worker.py DB FOLDER MODE``. The owner drafts on the (recording)
Telegram adapter with the offline models. Modes:

- ``ask``: /draft, print the Approve button's token once the approval is asked;
- ``press TOKEN``: press it, hang (for the SIGKILL) once the run has ended, before its outcome
  is queued;
- ``restart TOKEN``: start as after a crash, press the same button again (the platform's
  replay: the same callback query id), print what the owner was sent and the notes;
- ``second TOKEN``: start as after a crash, press the same button anew (another query id).
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
from bot.messages import IncomingMessage
from tests.support.crashing import say_ready
from tests.support.harness import OWNER, RecordingAdapter, make_settings

QUERY_ID = "query-1"  # the callback query of the press that the crash interrupts


async def main(folder: Path, mode: str, token: str) -> None:
    services = assemble(make_settings(folder / "home"))
    gateway = services.chat.gateway
    if mode == "press":
        deliver = gateway.outbox.deliver

        async def crash_before_outcome(platform: str, chat_id: str, key: str, text: str,
                                       buttons: Any = None, file: Any = None) -> None:
            if key.startswith("outcome:"):
                say_ready(folder)
                threading.Event().wait()  # the SIGKILL finds the process here
            await deliver(platform, chat_id, key, text, buttons, file)

        gateway.outbox.deliver = crash_before_outcome  # type: ignore[method-assign]
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    if mode == "ask":
        reply = await gateway.handle(IncomingMessage("telegram", OWNER, "1", OWNER,
                                                     "/draft a thank-you note to Ann"))
        assert reply is not None
        print(json.dumps({"token": next(b.token for b in reply.buttons
                                        if b.label == "Approve")}))
    elif mode == "press":
        await gateway.press("telegram", OWNER, token, QUERY_ID)
    else:
        pressed = await gateway.press("telegram", OWNER, token,
                                      QUERY_ID if mode == "restart" else "another-query")
        print(json.dumps({"sent": adapter.to(OWNER), "accepted": pressed.accepted,
                          "edit": pressed.edit_text,
                          "notes": [hit.text for hit in services.memory.recent("owner")]}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else ""))

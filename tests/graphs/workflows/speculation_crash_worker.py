"""A worker for the speculation crash test: the whole gateway on a real database, killed while
the agent's first turn runs speculatively and classify has not answered.

Usage: ``python speculation_crash_worker.py DB FOLDER MODE``. The owner asks a question on the
(recording) Telegram adapter. Modes:

- ``crash``: neither model ever answers; the big model's speculative turn is asked first (its
  request has left, it says, so classify asks next), and the small model says it is ready once
  classify has asked too (for the SIGKILL);
- ``restart``: start as after the crash with models that answer; print what was sent, the
  big model's calls in this process and the run's story.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bot.app import assemble
from bot.messages import IncomingMessage
from bot.models import Models
from bot.models.base import Message
from bot.models.base import Reply as ModelReply
from graphs.protocols import request_sent
from tests.support.crashing import log_ran, say_ready
from tests.support.harness import OWNER, PurposeModel, RecordingAdapter, describe, make_settings

QUESTION = "what did Ann say about the budget?"


class Hanging(PurposeModel):
    """Never answers; says its request has left (its ``ready`` call also tells the test it got
    there)."""

    def __init__(self, role: str, folder: Path, *, ready: bool) -> None:
        super().__init__(role)
        self.folder, self.ready = folder, ready

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]],
                       **options: Any) -> ModelReply:
        log_ran(self.folder, f"{self.role}:{options.get('purpose')}")
        request_sent()
        if self.ready:
            say_ready(self.folder)
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


class Logged(PurposeModel):
    """Answers by purpose, logging each call to ``ran.log``."""

    def __init__(self, role: str, folder: Path) -> None:
        super().__init__(role)
        self.folder = folder

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]],
                       **options: Any) -> ModelReply:
        log_ran(self.folder, f"{self.role}:{options.get('purpose')}")
        return await super().complete(messages, **options)


async def main(folder: Path, mode: str) -> None:
    if mode == "crash":
        models = Models(small=Hanging("small", folder, ready=True),
                        big=Hanging("big", folder, ready=False))
    else:
        models = Models(small=Logged("small", folder), big=Logged("big", folder))
    services = assemble(make_settings(folder / "home"), models=models)
    gateway = services.chat.gateway
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)  # after the crash: answers the open message
    if mode == "crash":
        await gateway.handle(IncomingMessage("telegram", OWNER, "m1", OWNER, QUESTION, "Ann"))
        return
    [run] = services.flows.store.runs()
    print(json.dumps({"sent": adapter.sent, "status": run.status,
                      "story": [describe(e) for e in services.flows.store.events(run.id)]}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[2]), sys.argv[3]))

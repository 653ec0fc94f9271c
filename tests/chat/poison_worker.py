"""A worker for the poison-message test: a message whose answer kills the process, every time.

Usage: ``python poison_worker.py DB FOLDER MODE``. The models SIGKILL their own process when a
prompt holds the word "poison" (as a bug in a library might). Modes:

- ``send``: the owner sends "poison" (the process dies answering it);
- ``start``: start as after a crash, answer what is open, then send "hello"; print what the
  owner was sent and the poison message's inbox status.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.app import assemble
from bot.messages import IncomingMessage
from bot.models import Models
from bot.models.base import Message, Reply
from bot.models.offline import OfflineModel
from tests.support.crashing import log_ran
from tests.support.harness import OWNER, RecordingAdapter, make_settings


class PoisonedModel(OfflineModel):
    """The offline model, but a prompt with "poison" in it kills the process."""

    def __init__(self, folder: Path, role: str) -> None:
        super().__init__(role=role)
        self.folder = folder

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], **kwargs: Any
                       ) -> Reply:
        if "poison" in str(messages):
            log_ran(self.folder, "poisoned")
            os.kill(os.getpid(), signal.SIGKILL)
        return await super().complete(messages, **kwargs)


async def main(folder: Path, mode: str) -> None:
    models = Models(small=PoisonedModel(folder, "small"), big=PoisonedModel(folder, "big"))
    services = assemble(make_settings(folder / "home"), models=models)
    gateway = services.chat.gateway
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    if mode == "send":
        await gateway.handle(IncomingMessage("telegram", OWNER, "1", OWNER, "poison"))
        raise AssertionError("the poison did not kill the process")
    await gateway.handle(IncomingMessage("telegram", OWNER, "2", OWNER, "hello"))
    print(json.dumps({"sent": adapter.to(OWNER),
                      "status": services.delivery.inbox.status("telegram", OWNER, "1")}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[2]), sys.argv[3]))

"""A worker for the approval crash tests: the gateway with mcp-server-git, killed at a point.

Usage: ``python approval_crash_worker.py DB FOLDER MODE [TOKEN]`` (the home is FOLDER/home,
its mcp.json written by the test; graph mode off). Modes:

- ``ask``: the owner asks for a commit, the model calls ``git__git_commit``; print the Approve
  button's token, then hang while the approval waits (for the SIGKILL);
- ``press TOKEN``: as after a restart, press it; print what the owner was sent;
- ``press-hang TOKEN``: press it, and hang inside the approved call (the SIGKILL comes in the
  middle of it);
- ``restart``: start as after that crash; print what the owner was sent and the buttons.
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
from bot.models import Models
from tests.support.crashing import log_ran, say_ready
from tests.support.harness import OWNER, PurposeModel, RecordingAdapter, make_settings


async def main(folder: Path, mode: str, token: str) -> None:
    big = PurposeModel("big")
    services = assemble(
        make_settings(folder / "home", FRONTDESK_GRAPH_WORKFLOWS="0"),
        models=Models(small=PurposeModel("small"), big=big))
    gateway = services.chat.gateway
    adapter = RecordingAdapter()
    assert services.tools.mcp.configured_file is not None
    if mode == "press-hang":
        async def hang(*_: Any, **__: Any) -> Any:
            log_ran(folder, "git_commit")
            say_ready(folder)
            threading.Event().wait()  # the SIGKILL finds the process inside the call

        services.tools.mcp.tools.call = hang  # type: ignore[method-assign]
    await gateway.start()
    await gateway.attach(adapter)
    repo = (folder / "notes-repo").as_posix()
    if mode == "ask":
        big.enqueue(tool_calls=[("git__git_commit", {"repo_path": repo, "message": "add b"})])
        reply = await gateway.handle(IncomingMessage("telegram", OWNER, "1", OWNER,
                                                     "commit the staged file"))
        assert reply is not None
        print(json.dumps({"token": next(b.token for b in reply.buttons
                                        if b.label == "Approve")}), flush=True)
        say_ready(folder)
        threading.Event().wait()
    big.enqueue("Committed.")
    buttons: dict[str, str] = {}
    if mode in ("press", "press-hang"):
        pressed = await gateway.press("telegram", OWNER, token)
        assert pressed.accepted
    else:
        for wait in services.flows.store.waits("open"):
            shown = services.delivery.buttons.for_wait(wait.run_id, wait.as_wait())
            buttons = {b.label: b.token for b in shown}
    await services.tools.mcp.stop()
    print(json.dumps({"sent": adapter.to(OWNER), "buttons": buttons}))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[2]), sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else ""))

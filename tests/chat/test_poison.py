"""A message whose answer crashes the process every time is set aside, visibly, after three
tries: it never keeps the bot from starting."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

from bot.app import assemble
from bot.chat.answering import GAVE_UP, MAX_TRIES
from bot.messages import IncomingMessage
from tests.support.crashing import finish, ran, start_worker
from tests.support.harness import OWNER, RecordingAdapter, make_settings

WORKER = Path(__file__).with_name("poison_worker.py")


def killed(proc: subprocess.Popen[str]) -> None:
    proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def test_a_message_that_kills_every_try_is_set_aside_after_three(tmp_path: Path) -> None:
    killed(start_worker(WORKER, tmp_path, "send"))  # the first try, live
    for _ in range(MAX_TRIES - 1):  # each start takes it up again, and dies of it
        killed(start_worker(WORKER, tmp_path, "start"))
    result = finish(start_worker(WORKER, tmp_path, "start"))
    assert ran(tmp_path)["poisoned"] == MAX_TRIES
    assert result["status"] == "failed"
    failed, hello = result["sent"]
    assert failed.startswith("Sorry, something went wrong")  # visibly failed, not silence
    assert hello  # the bot started and answers the next message


async def test_a_message_whose_every_try_died_outside_a_run_is_answered_as_set_aside(
        tmp_path: Path) -> None:
    services = assemble(make_settings(tmp_path / "home"))
    message = IncomingMessage("telegram", OWNER, "7", OWNER, "/notes")
    services.delivery.inbox.record("telegram", OWNER, "7", OWNER, message.to_json())
    for _ in range(MAX_TRIES):  # three tries, each of which the process died in
        services.delivery.inbox.take_up("telegram", OWNER, "7")
    gateway = services.chat.gateway
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    [set_aside] = adapter.to(OWNER)
    assert set_aside == GAVE_UP.format(MAX_TRIES)
    assert services.delivery.inbox.status("telegram", OWNER, "7") == "failed"
    assert services.flows.store.runs() == []  # nothing was tried a fourth time

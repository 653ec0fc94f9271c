"""Book survives a SIGKILL at each exact point: before the event is written, while it is (the
calendar wrote it, the answer never came back), and after it, before the guest is told.
After the restart there is exactly one event and the guest was told "Booked" exactly once, with
the event's .ics file exactly once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.crashing import finish, kill_when_ready, ran, start_worker
from tests.support.harness import GUEST, OWNER

WORKER = Path(__file__).with_name("crash_worker.py")


@pytest.mark.parametrize("point", ["before", "during", "after"])
def test_a_crash_at_book_leaves_one_event_and_one_booked_message(tmp_path: Path,
                                                                 point: str) -> None:
    token = finish(start_worker(WORKER, tmp_path, "ask"))["token"]
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, point, token))
    after = finish(start_worker(WORKER, tmp_path, "restart"))
    assert len(after["events"]) == 1
    assert [m["status"] for m in after["meetings"]] == ["booked"]
    assert after["meetings"][0]["uid"] == after["events"][0]["uid"]
    told = [line for line in ran(tmp_path) if line.startswith(f"{GUEST}|Booked:")]
    assert sum(ran(tmp_path)[line] for line in told) == 1
    files = [line for line in ran(tmp_path) if line.startswith(f"{GUEST}|file|meeting-")]
    assert len(files) == 1 and ran(tmp_path)[files[0]] == 1, ran(tmp_path)
    assert ran(tmp_path)["created"] == 1  # the calendar made the event once, in all
    # The owner's "Booked" reached the owner's own chat once, whichever process sent it
    # (a restart queues it before the adapter runs: never to a scope like "user:100").
    owner = {line: n for line, n in ran(tmp_path).items() if "|Booked:" in line
             and not line.startswith(f"{GUEST}|")}
    assert list(owner.values()) == [1] and next(iter(owner)).startswith(f"{OWNER}|"), owner

"""A meeting's reminders across SIGKILL: the guest and the owner each get one "Reminder: … in
15 minutes …" with the link, never twice, whether the bot was killed before their time or
after sending one and before recording it; a cancel removes them, a move carries them to the
new time; the 1-day lead, already past at booking, is skipped. Real processes on one database
(``remind_worker.py``)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from tests.reminders.test_crash import wait_past
from tests.support.crashing import finish, kill_when_ready, start_worker
from tests.support.harness import GUEST, OWNER

WORKER = Path(__file__).with_name("remind_worker.py")


def booked(tmp_path: Path, mode: str = "book") -> dict[str, Any]:
    result = finish(start_worker(WORKER, tmp_path, mode))
    assert result["reminders"] == []  # nothing fired at booking: the 1 day lead is past
    return result


def read(text: str) -> str:
    """What the chat shows of the Markdown sent (a notice is escaped to show literally)."""
    return re.sub(r"\\(.)", r"\1", text)


def assert_once_each(reminders: list[dict[str, Any]]) -> None:
    assert sorted(r["chat"] for r in reminders) == sorted([GUEST, OWNER]), reminders
    texts = {r["chat"]: read(r["text"]) for r in reminders}
    for text in texts.values():
        assert text.startswith("Reminder: budget review with "), text
        assert " in 15 minutes, " in text and "10:00–10:15" in text
        assert "Join: https://meet.jit.si/Frontdesk-" in text
    assert not any("1 day" in text for text in texts.values())
    guest, owner = texts[GUEST], texts[OWNER]
    assert "with the owner" in guest and "with Bob" in owner


def test_killed_before_their_time_each_side_is_reminded_once(tmp_path: Path) -> None:
    meeting = booked(tmp_path)
    assert meeting["status"] == "booked"
    assert len(meeting["pending"]) == 2 and all(":15m:" in p for p in meeting["pending"])
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "idle"))
    assert time.time() < meeting["due_at"]  # killed before the reminders' time
    wait_past(meeting["due_at"])
    after = finish(start_worker(WORKER, tmp_path, "until-sent"))
    assert_once_each(after["reminders"])
    assert after["pending"] == []
    again = finish(start_worker(WORKER, tmp_path, "drain"))
    assert len(again["reminders"]) == 2


def test_killed_after_one_was_sent_none_is_sent_twice(tmp_path: Path) -> None:
    booked(tmp_path)
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "hang-before-advance"))
    sent = (tmp_path / "sent.log").read_text()
    assert sent.count("Reminder:") == 1  # killed after one was sent, before it was recorded
    after = finish(start_worker(WORKER, tmp_path, "drain"))
    assert_once_each(after["reminders"])
    assert after["pending"] == []


def test_a_cancel_removes_the_reminders(tmp_path: Path) -> None:
    meeting = booked(tmp_path, "book-cancel")
    assert meeting["status"] == "cancelled" and meeting["pending"] == []
    wait_past(meeting["due_at"])
    after = finish(start_worker(WORKER, tmp_path, "drain"))
    assert after["reminders"] == [] and after["pending"] == []


def test_a_moved_meeting_is_reminded_once_at_its_new_time_across_a_kill(tmp_path: Path) -> None:
    meeting = booked(tmp_path, "book-move")
    assert meeting["status"] == "booked" and meeting["start"].endswith("10:00:00+00:00")
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "idle"))
    wait_past(meeting["due_at"])
    after = finish(start_worker(WORKER, tmp_path, "until-sent"))
    assert_once_each(after["reminders"])  # for 10:00–10:15, the time it moved to
    assert not any("10:15–10:30" in r["text"] for r in after["reminders"])
    assert after["pending"] == []  # the old time's reminders went with the move

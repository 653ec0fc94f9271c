"""SIGKILL before and after a reminder's time, then a restart: delivered exactly once (real clock).

The workers run the real gateway, outbox and timer on one database (``crash_worker.py``).
"""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from tests.support.crashing import finish, kill_when_ready, start_worker
from tests.support.polling import wait_until

WORKER = Path(__file__).with_name("crash_worker.py")


def wait_past(moment: float) -> None:
    """Poll the clock (with a deadline) until ``moment`` has passed."""
    wait_until(lambda: time.time() > moment, 30, what="the moment", interval=0.01)


def test_killed_before_its_time_it_is_sent_once_at_start_marked_late(tmp_path: Path) -> None:
    due_at = finish(start_worker(WORKER, tmp_path, "set", "4"))["due_at"]
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "idle"))
    assert time.time() < due_at and not (tmp_path / "sent.log").exists()
    wait_past(due_at)
    after = finish(start_worker(WORKER, tmp_path, "until-sent"))
    due = datetime.fromtimestamp(due_at, ZoneInfo("Europe/Berlin"))
    assert [s["text"] for s in after["sent"]] == [
        f"⏰ Reminder: stretch (late: due {due:%H:%M})"]
    assert after["pending"] == []
    again = finish(start_worker(WORKER, tmp_path, "drain"))
    assert len(again["sent"]) == 1


def test_killed_after_sending_before_moving_on_it_is_not_sent_again(tmp_path: Path) -> None:
    due_at = finish(start_worker(WORKER, tmp_path, "set", "2"))["due_at"]
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "hang-before-advance"))
    after = finish(start_worker(WORKER, tmp_path, "drain"))
    [only] = after["sent"]
    assert only["text"] == "⏰ Reminder: stretch"  # on time, before the crash: not late
    assert 0 <= only["t"] - due_at < 2.0  # fired within ~2 s of its time
    assert after["pending"] == []


def test_killed_with_the_message_in_the_outbox_it_is_sent_once_after_restart(
        tmp_path: Path) -> None:
    finish(start_worker(WORKER, tmp_path, "set", "2"))
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "hang-before-send"))
    assert not (tmp_path / "sent.log").exists()
    after = finish(start_worker(WORKER, tmp_path, "drain"))
    assert [s["text"] for s in after["sent"]] == ["⏰ Reminder: stretch"]
    assert after["pending"] == []

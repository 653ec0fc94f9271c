"""A crash between a button press and its reply: the outcome is still sent, once."""

from __future__ import annotations

from pathlib import Path

from tests.crashing import finish, kill_when_ready, start_worker

WORKER = Path(__file__).with_name("press_crash_worker.py")


def test_a_press_whose_run_ended_before_the_crash_still_gets_its_outcome(tmp_path: Path) -> None:
    token = finish(start_worker(WORKER, tmp_path, "ask"))["token"]
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "press", token))
    after = finish(start_worker(WORKER, tmp_path, "restart", token))
    outcomes = [text for text in after["sent"] if text.startswith("Approved and saved")]
    assert len(outcomes) == 1  # queued at start; the replayed press does not send it again
    assert after["accepted"] and after["edit"] == "Decision: Approve"  # the buttons settle
    assert len(after["notes"]) == 1

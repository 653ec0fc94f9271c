"""A crash between a button press and its reply: the outcome is still sent, once."""

from __future__ import annotations

from pathlib import Path

from tests.support.crashing import finish, kill_when_ready, start_worker

WORKER = Path(__file__).with_name("press_crash_worker.py")


def test_a_press_whose_run_ended_before_the_crash_still_gets_its_outcome(tmp_path: Path) -> None:
    token = finish(start_worker(WORKER, tmp_path, "ask"))["token"]
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "press", token))
    after = finish(start_worker(WORKER, tmp_path, "restart", token))
    outcomes = [text for text in after["sent"] if text.startswith("Approved and saved")]
    assert len(outcomes) == 1  # queued at start; the replayed press does not send it again
    assert after["accepted"] and after["edit"] == "Decision: Approve"  # the buttons settle
    assert len(after["notes"]) == 1


def test_a_second_press_after_the_crash_is_refused(tmp_path: Path) -> None:
    token = finish(start_worker(WORKER, tmp_path, "ask"))["token"]
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "press", token))
    after = finish(start_worker(WORKER, tmp_path, "second", token))
    # The outcome owed by the first press is still sent, once; the new press decides nothing.
    assert [t for t in after["sent"] if t.startswith("Approved and saved")] != []
    assert not after["accepted"] and after["edit"] is None
    assert len(after["notes"]) == 1

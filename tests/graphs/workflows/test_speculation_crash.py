"""A crash while the agent's first turn runs speculatively: after the restart the question is
answered once, by a full_agent that really ran, and nothing of the speculation was kept."""

from __future__ import annotations

from pathlib import Path

from tests.support.crashing import finish, kill_when_ready, ran, start_worker

WORKER = Path(__file__).with_name("speculation_crash_worker.py")


def test_a_crash_during_speculation_is_answered_once_after_the_restart(tmp_path: Path) -> None:
    kill_when_ready(tmp_path, start_worker(WORKER, tmp_path, "crash"))
    assert ran(tmp_path) == {"small:classify": 1, "big:agent": 1}  # both in flight at the kill
    after = finish(start_worker(WORKER, tmp_path, "restart"))
    assert after["sent"] == [["100", "agent: what did Ann say about the budget?"]]
    assert after["status"] == "completed"
    story = after["story"]
    # the first process got as far as the speculation; its turn was never recorded as done
    assert story.count("speculation:started") == 1
    assert "model_call:big:agent:speculative" not in story
    assert story.count("node_start:full_agent") == story.count("node_end:full_agent") == 1
    # the restart classified again and ran the agent's turn itself, once
    assert ran(tmp_path) == {"small:classify": 2, "big:agent": 2}
    assert story.count("model_call:big:agent") == 1
    assert story[-1] == "graph_end:completed"

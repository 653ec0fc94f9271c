"""SIGKILL mid-pipeline and at an ask; a new process continues without redoing finished work."""

from __future__ import annotations

import subprocess
from pathlib import Path

from graphs.codefirst import flow_view
from graphs.runs import RunStore
from tests.support.crashing import finish, kill_when_ready, ran, start_worker

WORKER = Path(__file__).with_name("flow_worker.py")


def worker(tmp_path: Path, mode: str, *extra: str) -> subprocess.Popen[str]:
    return start_worker(WORKER, tmp_path, mode, *extra)


def matrix(tmp_path: Path) -> list[list[str]]:
    store = RunStore.open(tmp_path / "f.db")
    try:
        run_id = store.runs(limit=1)[0].id
        [grid] = flow_view(store.steps(run_id))["pipelines"]
        assert grid["items"] == ["a", "b", "c", "d"] and grid["stages"] == ["fetch", "shape"]
        return [[cell["status"] for cell in row] for row in grid["cells"]]
    finally:
        store.db.close()


def test_a_pipeline_killed_midway_resumes_at_its_item_and_stage(tmp_path: Path) -> None:
    kill_when_ready(tmp_path, worker(tmp_path, "cell"))
    assert ran(tmp_path) == {"a:fetch": 1, "a:shape": 1, "b:fetch": 1, "b:shape": 1,
                             "c:fetch": 1, "c:shape": 1}
    assert matrix(tmp_path) == [["done", "done"], ["done", "done"], ["done", "running"],
                                ["pending", "pending"]]
    [recovered] = finish(worker(tmp_path, "recover"))
    assert recovered["status"] == "waiting"
    assert recovered["waits"][0]["question"] == "Keep them?"
    # c's fetch and everything before it ran once; c's shape (in flight) ran again; d once
    assert ran(tmp_path) == {"a:fetch": 1, "a:shape": 1, "b:fetch": 1, "b:shape": 1,
                             "c:fetch": 1, "c:shape": 2, "d:fetch": 1, "d:shape": 1}
    assert matrix(tmp_path) == [["done", "done"]] * 4
    done = finish(worker(tmp_path, "resume", "Approve"))
    assert done["status"] == "completed"
    assert done["state"]["kept"] == ["aa", "bb", "cc", "dd"]
    assert ran(tmp_path)["d:shape"] == 1


def test_killed_while_asking_then_answered_in_a_new_process(tmp_path: Path) -> None:
    kill_when_ready(tmp_path, worker(tmp_path, "ask"))
    store = RunStore.open(tmp_path / "f.db")
    [wait] = store.waits("open")
    assert wait.question == "Keep them?" and wait.options == ["Approve", "Discard"]
    run = store.run(wait.run_id)
    assert run is not None and run.status == "waiting" and run.workflow == "crashy_flow"
    store.db.close()
    assert finish(worker(tmp_path, "recover")) == []  # a waiting run is not "running"
    done = finish(worker(tmp_path, "resume", "Approve"))
    assert done["status"] == "completed" and done["state"]["by"].startswith("pid:")
    assert done["state"]["kept"] == ["aa", "bb", "cc", "dd"]
    assert set(ran(tmp_path).values()) == {1}  # no cell ran twice
    again = finish(worker(tmp_path, "resume", "Discard"))  # a second answer changes nothing
    assert again["status"] == "completed" and again["state"]["kept"] == ["aa", "bb", "cc", "dd"]

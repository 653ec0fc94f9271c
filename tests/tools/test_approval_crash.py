"""The owner's approval survives a SIGKILL, and an approved call is never re-run unasked.

Real processes on one database, with the real mcp-server-git on a temporary repository:
killed while the approval waits, the restarted bot takes the same button and commits once;
killed inside the approved call, the restarted bot asks again, saying it may have run.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.crashing import finish, kill_when_ready, ran, start_worker
from tests.tools.conftest import commits, git_server, write_config

WORKER = Path(__file__).with_name("approval_crash_worker.py")


def ask_and_kill(tmp_path: Path) -> str:
    """Ask for the commit in a worker, SIGKILL it while the approval waits; the token."""
    proc = start_worker(WORKER, tmp_path, "ask")
    assert proc.stdout is not None
    line = proc.stdout.readline()
    kill_when_ready(tmp_path, proc)
    return str(json.loads(line)["token"])


def test_killed_while_waiting_then_approved_commits_once(tmp_path: Path, repo: Path) -> None:
    write_config(tmp_path / "home", {"git": git_server(repo)})
    token = ask_and_kill(tmp_path)
    assert commits(repo) == 1
    result = finish(start_worker(WORKER, tmp_path, "press", token))
    assert commits(repo) == 2
    assert result["sent"][-1] == "Committed."


def test_killed_inside_the_approved_call_asks_again(tmp_path: Path, repo: Path) -> None:
    write_config(tmp_path / "home", {"git": git_server(repo)})
    token = ask_and_kill(tmp_path)
    proc = start_worker(WORKER, tmp_path, "press-hang", token)
    kill_when_ready(tmp_path, proc)
    assert ran(tmp_path)["git_commit"] == 1 and commits(repo) == 1
    restarted = finish(start_worker(WORKER, tmp_path, "restart"))
    asked = restarted["sent"][-1]
    assert "may already have run" in asked and "git_commit" in asked
    assert set(restarted["buttons"]) == {"Approve", "Deny"}
    assert commits(repo) == 1  # not run again silently
    final = finish(start_worker(WORKER, tmp_path, "press", restarted["buttons"]["Approve"]))
    assert commits(repo) == 2 and final["sent"][-1] == "Committed."

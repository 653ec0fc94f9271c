"""The console on a real (pseudo-)terminal: readline's history brings back the last
line with the up arrow, Ctrl-C leaves at once with exit 0 and no traceback, the history is
kept for next time."""

from __future__ import annotations

from pathlib import Path

from tests.support.child_process import clean_env
from tests.support.terminal import Terminal

UP = b"\x1b[A"


def test_history_and_ctrl_c(tmp_path: Path) -> None:
    env = clean_env(FRONTDESK_HOME=str(tmp_path / "home"), TERM="dumb")
    with Terminal(["run"], cwd=tmp_path, env=env) as term:
        term.expect("you are the owner")
        term.expect("> ")
        term.send("remember that the gate code is 4711")
        term.expect("· ")  # the status line under the answer
        term.expect("> ")
        term.type(UP + b"\r")  # the same line again, from readline's history
        term.expect("· ")
        term.expect("> ")
        assert term.interrupt() == 0
    saved = [line for line in term.transcript.splitlines() if "4711" in line]
    assert len(saved) >= 4  # typed, answered, recalled, answered again
    assert "bye" in term.transcript and "Traceback" not in term.transcript
    history = (tmp_path / "home" / "console_history").read_text()
    assert "remember that the gate code is 4711" in history

"""A SIGKILL inside a merge window: after the restart the lines get one reply, none lost or doubled.

``frontdesk run`` as a subprocess against the fake Bot API, with a window long enough to kill
it while the burst still waits: every line is in the inbox before any waiting, so the next
start finds them and answers them as the one turn they were.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from graphs.runs import RunStore
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import OWNER, FrontdeskProcess

LINES = ("a question in three lines:", "when does the shop", "open on monday?")


def inbox(home: Path) -> list[tuple[str, str | None]]:
    """(status, run id) of every inbox row."""
    with sqlite3.connect(home / "frontdesk.db", timeout=10) as db:
        return [(str(s), r) for s, r in db.execute("SELECT status, run_id FROM inbox")]


def test_killed_inside_the_window_the_burst_is_answered_once_after_restart(
        tmp_path: Path) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, env={"FRONTDESK_MERGE_WINDOW": "4"})
        bot.start()
        for line in LINES:
            telegram.push_message(OWNER, OWNER, line)
        bot.poll(lambda: len(inbox(tmp_path)) == len(LINES))  # recorded: now waiting
        bot.kill()  # well inside the 4 s window: nothing was answered
        assert telegram.messages_to(OWNER) == []
        assert inbox(tmp_path) == [("received", None)] * len(LINES)

        bot.start()
        [reply] = bot.replies(OWNER, 1)
        bot.poll(lambda: {status for status, _ in inbox(tmp_path)} == {"answered"})
        bot.stop()
    assert len(telegram.messages_to(OWNER)) == 1, "the burst was answered more than once"
    assert len({run for _, run in inbox(tmp_path)}) == 1
    assert "offline" in reply.text
    store = RunStore.open(tmp_path / "frontdesk.db")
    [run] = store.runs(limit=10)
    assert store.record(run.id).state["text"] == "\n".join(LINES)  # in order, one turn

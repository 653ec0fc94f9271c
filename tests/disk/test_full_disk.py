"""`frontdesk run` with FRONTDESK_HOME on a real small disk that fills up, then has room again.

The home is a tmpfs the test mounts (``tests/disk/small_disk.py``) and fills with a filler
file. While it is full the bot stays up: the messages sent meanwhile are not confirmed to
Telegram (they wait there), one line says so on the log and one notice reaches the owner, and
nothing is answered. Once the filler is deleted, every message is answered exactly once, the
database passes SQLite's integrity check, and no half-written trace or backup is left.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.disk.small_disk import fill, small_disk
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import ALLOWED, OWNER, FrontdeskProcess

FULL_LINE = "is full ("  # the one line an episode logs (bot.delivery.disk)
ROOM_LINE = "there is room on the disk"
NOTICE = "The disk is full"
SENT_WHILE_FULL = {ALLOWED[0]: 3, ALLOWED[1]: 2, OWNER: 1}
RETRIES_SEEN = 3  # the intake asks Telegram again this many times while full


def open_rows(database: Path) -> list[tuple[str, str, str]]:
    conn = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [(str(chat), str(message), str(status)) for chat, message, status in
                conn.execute("SELECT chat_id, message_id, status FROM inbox")]
    finally:
        conn.close()


def integrity(database: Path) -> str:
    conn = sqlite3.connect(database)
    try:
        return str(conn.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        conn.close()


def leftovers(home: Path) -> list[str]:
    """Half-written files: a trace written aside, a backup's partial archive or staging."""
    return sorted(str(path.relative_to(home)) for path in home.rglob("*")
                  if path.name.endswith((".tmp", ".partial", ".part"))
                  or path.name.startswith("backup-"))


def test_a_full_disk_keeps_the_bot_up_and_loses_nothing(tmp_path: Path) -> None:
    with small_disk(tmp_path / "home", "8m") as home, FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, home, env={"FRONTDESK_STREAM": "off"})
        bot.log_path = tmp_path / "bot.log"  # the bot's stderr is not on the full disk
        bot.start()
        telegram.push_message(OWNER, OWNER, "hello before the disk fills")
        bot.replies(OWNER, 1)

        filler = fill(home)
        polls = telegram.polls
        for chat, count in SENT_WHILE_FULL.items():
            for number in range(count):
                telegram.push_message(chat, chat, f"message {number} while full, from {chat}")
        bot.wait(lambda: NOTICE in " ".join(m.text for m in telegram.messages_to(OWNER)))
        bot.wait(lambda: telegram.polls >= polls + RETRIES_SEEN, timeout=30)

        assert bot.proc is not None and bot.proc.poll() is None, "the bot stays up"
        assert bot.log().count(FULL_LINE) == 1, bot.log()[-3000:]
        notices = [m for m in telegram.messages_to(OWNER) if NOTICE in m.text]
        assert len(notices) == 1
        assert [telegram.messages_to(chat) for chat in ALLOWED] == [[], []]
        assert len(telegram.pending_updates()) == sum(SENT_WHILE_FULL.values())
        backup = subprocess.run([sys.executable, "-m", "bot.cli.main", "backup"], env=bot.env,
                                cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert backup.returncode == 1 and "no backup made" in backup.stderr, backup.stderr
        assert "Traceback" not in backup.stderr
        assert leftovers(home) == [] and not list(home.glob("backups/*.tar.gz"))

        filler.unlink()  # room again: everything that waited is answered, once
        for chat, count in SENT_WHILE_FULL.items():
            bot.replies(chat, count + (2 if chat == OWNER else 0), timeout=30)
        bot.poll(lambda: all(status == "answered" for _, _, status in open_rows(
            home / "frontdesk.db")) and not telegram.pending_updates())
        bot.wait(lambda: ROOM_LINE in bot.log())
        bot.stop()


        for chat, count in SENT_WHILE_FULL.items():
            answers = [m for m in telegram.messages_to(chat) if NOTICE not in m.text]
            assert len(answers) == count + (1 if chat == OWNER else 0), answers
        assert len(open_rows(home / "frontdesk.db")) == sum(SENT_WHILE_FULL.values()) + 1
        assert bot.log().count(FULL_LINE) == 1
        assert integrity(home / "frontdesk.db") == "ok"
        assert leftovers(home) == []


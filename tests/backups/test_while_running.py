"""Backups taken while a real `frontdesk run` answers messages: each copy opens and passes its
integrity check, and the bot answers every message once (none lost, none doubled)."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

from bot.backups.archive import unpack_backup
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import ALLOWED, OWNER, FrontdeskProcess

CHATS = (OWNER, *ALLOWED)
MIN_ROUNDS = 3
BACKUPS = 3


def inbox_ids(database: Path) -> list[str]:
    conn = sqlite3.connect(f"{database.resolve().as_uri()}?mode=ro", uri=True)
    try:
        return [f"{chat}/{message}" for chat, message in conn.execute(
            "SELECT chat_id, message_id FROM inbox WHERE platform = 'telegram'")]
    finally:
        conn.close()


def test_backups_while_the_bot_answers_lose_and_double_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with FakeTelegramServer() as telegram:
        # the bot's answers are not paced here: rounds must go on while a backup is taken
        bot = FrontdeskProcess(telegram, home, env={"FRONTDESK_WRITES_PER_SECOND": "1000"})
        bot.start()
        written: list[Path] = []
        failures: list[str] = []

        answered_once = threading.Event()  # backups start once messages are coming in: a
        # copy then always holds some of them, and the rounds go on past each copy

        def back_up_repeatedly() -> None:
            answered_once.wait(timeout=120)
            for number in range(BACKUPS):
                target = tmp_path / f"while-{number}.tar.gz"
                done = subprocess.run([sys.executable, "-m", "bot.cli.main", "backup",
                                       str(target)], env=bot.env, cwd=tmp_path,
                                      capture_output=True, text=True, timeout=120)
                if done.returncode != 0:
                    failures.append(done.stderr)
                written.append(target)

        backups = threading.Thread(target=back_up_repeatedly)
        backups.start()
        rounds = 0
        while backups.is_alive() or rounds < MIN_ROUNDS:  # the bot answers all the while
            for chat in CHATS:
                telegram.push_message(chat, chat, f"note {rounds} from {chat}: buy stamps")
            rounds += 1
            for chat in CHATS:
                bot.replies(chat, rounds, timeout=60)
            answered_once.set()
        backups.join(timeout=300)
        bot.poll(lambda: len(inbox_ids(home / "frontdesk.db")) == rounds * len(CHATS))
        bot.stop()

    assert failures == [] and len(written) == BACKUPS
    for chat in CHATS:  # one answer per message: none lost, none doubled
        assert len(telegram.messages_to(chat)) == rounds
    final = inbox_ids(home / "frontdesk.db")
    assert len(final) == len(set(final)) == rounds * len(CHATS)
    taken_midway = 0
    for number, path in enumerate(written):
        unpacked = tmp_path / f"out-{number}"
        unpack_backup(path, unpacked)  # checksum, SQLite's integrity check, migrations
        copy = inbox_ids(unpacked / "frontdesk.db")
        assert all(n == 1 for n in Counter(copy).values()) and set(copy) <= set(final)
        taken_midway += 0 < len(copy) < len(final)
    assert taken_midway  # a copy of a moment while messages were coming and going

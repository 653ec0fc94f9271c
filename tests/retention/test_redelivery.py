"""A late re-delivery of a Telegram update whose message was pruned is still answered once."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.schema import open_database
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import ALLOWED, FrontdeskProcess

FRIEND = ALLOWED[0]


@pytest.fixture
def bot(tmp_path: Path) -> Iterator[tuple[FakeTelegramServer, FrontdeskProcess]]:
    with FakeTelegramServer() as telegram:
        process = FrontdeskProcess(telegram, tmp_path, allowed=list(ALLOWED))
        process.start()
        yield telegram, process
        process.stop()


def test_a_pruned_update_sent_again_is_not_answered_twice(
        bot: tuple[FakeTelegramServer, FrontdeskProcess],
        monkeypatch: pytest.MonkeyPatch) -> None:
    telegram, process = bot
    update = telegram.push_message(FRIEND, FRIEND, "hello")
    process.replies(FRIEND, 1)
    database = process.home / "frontdesk.db"
    two_hours_ago = time.time() - 7_200
    with open_database(database) as db:  # answered two hours ago
        # polled: the fake server is not told when the bot closes it (after the reply is
        # sent), so a ``wait`` on its changes saw it only at the next long poll, 20 s later
        process.poll(lambda: db.reader.execute(  # closed once its reply is sent
            "SELECT 1 FROM inbox WHERE status = 'answered'").fetchone())
        db.writer.execute("UPDATE inbox SET received_at = ?, done_at = ?",
                          (two_hours_ago, two_hours_ago))
    monkeypatch.setenv("FRONTDESK_HOME", str(process.home))
    assert main(["prune", "--days", "0.04"]) == 0  # keep about an hour
    with open_database(database) as db:
        assert db.reader.execute("SELECT payload FROM inbox").fetchall() == [("{}",)]
    telegram.push_raw_update({"message": update["message"]})  # Telegram sends it again
    telegram.push_message(FRIEND, FRIEND, "/help")  # answered after the late copy was seen
    replies = process.replies(FRIEND, 2)
    assert replies[1].text.startswith("I'm Frontdesk")
    assert len(telegram.messages_to(FRIEND)) == 2

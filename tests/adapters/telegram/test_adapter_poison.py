"""One bad item never stops `frontdesk run` on Telegram: each is marked failed, the rest go on.

A subprocess against the fake Bot API: malformed group updates (a stranger can send them),
an unreadable record in the inbox, a reply owed to a group that became a supergroup, a chat
that blocked the bot; and the one duplicate a crash between Telegram's accept and the
outbox's mark can cause.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from bot.delivery.ledger import ledger_stores
from bot.schema import open_database
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.child_process import clean_env
from tests.support.telegram_process import ALLOWED, OWNER, STRANGER, FrontdeskProcess

FRIEND = ALLOWED[0]
GROUP, SUPERGROUP, BLOCKED = -4100, -1004100, 5401


def inbox(home: Path) -> dict[str, tuple[str, str | None]]:
    """chat/message -> (status, error), read from the bot's database."""
    with sqlite3.connect(home / "frontdesk.db", timeout=10) as conn:
        return {f"{chat}/{message}": (status, error) for chat, message, status, error in
                conn.execute("SELECT chat_id, message_id, status, error FROM inbox")}


def runs_output(home: Path) -> str:
    done = subprocess.run([sys.executable, "-m", "bot.cli.main", "runs"],
                          env=clean_env(FRONTDESK_HOME=str(home)), cwd=home,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_malformed_group_mentions_are_marked_failed_confirmed_and_passed(
        tmp_path: Path) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path)
        bot.start()
        broken = [telegram.push_broken_mention(GROUP, STRANGER, "lone_surrogate"),
                  telegram.push_broken_mention(GROUP, FRIEND, "split_pair")]
        telegram.push_message(GROUP, FRIEND, "@frontdesk_test_bot /help", chat_type="group")
        [reply] = bot.replies(GROUP, 1)
        assert reply.text.startswith("I'm Frontdesk")
        bot.wait(lambda: not telegram.pending_updates())  # confirmed: the offset moved on
        bot.kill()

        bot.start()  # and a restart does not meet them again
        telegram.push_message(OWNER, OWNER, "/help")
        bot.replies(OWNER, 1)
        bot.stop()
    rows = inbox(tmp_path)
    for update in broken:
        status, error = rows[f"{GROUP}/{update['message']['message_id']}"]
        assert status == "failed" and error and "Unicode" in error
    listed = runs_output(tmp_path)
    assert "failed for good" in listed and listed.count(f"telegram/{GROUP}") == 2


def owe(home: Path) -> None:
    """What a crashed earlier run left: replies owed, messages open, one of them unreadable."""
    db = open_database(home / "frontdesk.db")
    conn = db.writer
    ledger = ledger_stores(db)
    ledger.parts.enqueue("telegram", str(GROUP), "g1", ["Owed to the old group."])
    ledger.parts.enqueue("telegram", str(BLOCKED), "b1", ["Owed to someone who blocked me."])
    ledger.parts.enqueue("telegram", str(OWNER), "o1", ["Owed to the owner."])
    message = {"platform": "telegram", "chat_id": str(OWNER), "user_id": str(OWNER),
               "user_name": "Owner", "is_private": True}
    ledger.inbox.record("telegram", str(OWNER), "7", str(OWNER),
                  {**message, "message_id": "7", "text": ["a caption", "that is a list"]})
    ledger.inbox.record("telegram", str(OWNER), "8", str(OWNER),
                  {**message, "message_id": "8", "text": "/help"})
    ledger.inbox.record("telegram", str(GROUP), "9", str(FRIEND),
                  {**message, "chat_id": str(GROUP), "user_id": str(FRIEND),
                   "message_id": "9", "text": "/help", "is_private": False})
    conn.close()


def test_a_start_sends_and_answers_around_items_that_fail_for_good(tmp_path: Path) -> None:
    owe(tmp_path)
    with FakeTelegramServer() as telegram:
        telegram.add_chat(OWNER)
        telegram.add_chat(GROUP, "group")
        telegram.migrate_chat(GROUP, SUPERGROUP)
        telegram.add_chat(BLOCKED)
        telegram.fail_next("sendMessage", 99, error_code=403, chat_id=BLOCKED,
                           description="Forbidden: bot was blocked by the user")
        bot = FrontdeskProcess(telegram, tmp_path)
        bot.start()  # polling at all: nothing stopped the start
        owed, helped = bot.replies(OWNER, 2)
        assert owed.text == "Owed to the owner." and helped.text.startswith("I'm Frontdesk")
        first, second = bot.replies(SUPERGROUP, 2)
        assert first.text == "Owed to the old group." and second.text.startswith("I'm Frontdesk")
        # The move was learnt once: the recovered group reply went to the supergroup directly.
        to_old = [c for c in telegram.calls_of("sendMessage") if c.params["chat_id"] == GROUP]
        assert [c.error_code for c in to_old] == [400]
        bot.poll(lambda: inbox(tmp_path)[f"{GROUP}/9"][0] == "answered")
        telegram.push_message(OWNER, OWNER, "/help")  # and live messages are answered
        bot.replies(OWNER, 3)
        bot.stop()
    assert inbox(tmp_path)[f"{OWNER}/7"][0] == "failed"
    with sqlite3.connect(tmp_path / "frontdesk.db") as conn:
        parts = dict(conn.execute("SELECT reply_key, coalesce(error, 'sent') FROM outbox"
                                  " WHERE reply_key IN ('g1', 'b1', 'o1')"))
    assert parts["g1"] == parts["o1"] == "sent" and "blocked" in parts["b1"]
    listed = runs_output(tmp_path)
    assert f"message telegram/{OWNER} 7" in listed and "unreadable" in listed
    assert f"part    telegram/{BLOCKED} b1 part 1/1" in listed


def test_a_crash_between_telegrams_accept_and_the_mark_repeats_that_part_once(
        tmp_path: Path) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path)
        bot.start()
        telegram.hold_answers(OWNER)
        telegram.push_message(OWNER, OWNER, "/help")
        bot.wait(lambda: telegram.answers_held)  # Telegram has the part; the bot has no answer
        bot.kill()
        telegram.release_answers(OWNER)
        bot.start()
        shown = bot.replies(OWNER, 2)
        telegram.push_message(OWNER, OWNER, "/notes")  # later parts are not repeated
        bot.replies(OWNER, 3)
        bot.poll(lambda: unsent(tmp_path) == 0)
        bot.stop()
    texts = [m.text for m in telegram.messages_to(OWNER)]
    assert texts[0] == texts[1] == shown[0].text and len(texts) == 3


def unsent(home: Path) -> int:
    with sqlite3.connect(home / "frontdesk.db", timeout=10) as conn:
        return int(conn.execute("SELECT count(*) FROM outbox WHERE sent_at IS NULL").fetchone()[0])

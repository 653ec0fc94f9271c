"""`frontdesk run` as systemd runs it: READY=1 once serving, plain journal lines, and a
SIGTERM that ends it cleanly (exit 0 within the stop timeout) with nothing lost or doubled.

Each test runs a real `frontdesk run` subprocess against the loopback fake Telegram Bot API,
with ``NOTIFY_SOCKET`` naming a datagram socket the test binds, as systemd does.
"""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.service.unit import TIMEOUT_STOP_S
from tests.fakes.openai_server import FakeOpenAIServer, text_reply
from tests.fakes.telegram_server import FakeTelegramServer
from tests.service.systemd_tools import NotifyListener
from tests.support.telegram_process import OWNER, FrontdeskProcess

CHAT = 5401
ANSI = re.compile(r"\x1b\[")


class SlowModel(FakeOpenAIServer):
    """Answers every call with "All set." after ``stall_s`` seconds (read per call)."""

    def __init__(self) -> None:
        super().__init__()
        self.stall_s = 0.0
        self.responder = lambda request: text_reply("All set.", stall_s=self.stall_s)


@pytest.fixture
def listener(tmp_path: Path) -> Iterator[NotifyListener]:
    socket = NotifyListener()  # the abstract namespace ("@…"), as systemd's own socket is
    yield socket
    socket.close()


def inbox(home: Path) -> dict[str, str]:
    with sqlite3.connect(home / "frontdesk.db") as conn:
        return {message: status for message, status in conn.execute(
            "SELECT message_id, status FROM inbox WHERE chat_id = ?", (str(CHAT),))}


def sends_to(telegram: FakeTelegramServer, chat: int) -> int:
    return len([c for c in telegram.calls_of("sendMessage") if c.params.get("chat_id") == chat])


def terminate(bot: FrontdeskProcess) -> int:
    """SIGTERM, as `systemctl stop` sends it; the exit status, within the stop timeout."""
    assert bot.proc is not None
    bot.proc.terminate()
    try:
        return bot.proc.wait(TIMEOUT_STOP_S)
    except subprocess.TimeoutExpired:
        bot.proc.kill()
        raise AssertionError(f"still running {TIMEOUT_STOP_S} s after SIGTERM:\n{bot.log()}") \
            from None
    finally:
        bot.proc = None


def test_ready_once_serving_then_journal_lines_and_a_clean_stop(
        tmp_path: Path, listener: NotifyListener) -> None:
    log_file = tmp_path / "bot.log"
    log_file.touch()
    stat = os.stat(log_file)  # stderr is "the journal": JOURNAL_STREAM names this file
    env = {"NOTIFY_SOCKET": listener.name, "JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}",
           "INVOCATION_ID": "0123456789abcdef0123456789abcdef"}
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, env=env)
        bot.start()
        [ready] = [m for m in listener.wait_for("READY=1") if "READY=1" in m]
        assert "STATUS=Serving Telegram" in ready.splitlines()
        assert telegram.calls_of("getMe"), "ready before Telegram said who the bot is"
        telegram.push_message(OWNER, OWNER, "/help")
        bot.replies(OWNER, 1)
        assert terminate(bot) == 0
        listener.wait_for("STOPPING=1")
    lines = [line for line in bot.log().splitlines() if line]
    assert not [line for line in lines if ANSI.search(line)]
    assert not [line for line in lines if not re.match(r"<[0-7]>\S", line)], bot.log()
    assert "<5>Telegram: @frontdesk_test_bot (id 123456), owner 42, also allowed: 43, 44" \
        in lines
    assert "<5>Ready: serving Telegram" in lines
    assert any(line.startswith("<6>INFO bot.adapters.telegram.start: Telegram: signed in")
               for line in lines)
    assert lines[-1].startswith("<5>Stopped:")
    assert not any(re.match(r"<\d>\d{4}-\d\d-\d\d", line) for line in lines)  # the journal's clock


def test_not_the_journal_still_plain_and_ready(tmp_path: Path,
                                               listener: NotifyListener) -> None:
    with FakeTelegramServer() as telegram:  # stderr is a file of its own: no priorities
        bot = FrontdeskProcess(telegram, tmp_path, env={"NOTIFY_SOCKET": listener.name})
        bot.start()
        listener.wait_for("READY=1")
        assert terminate(bot) == 0
    lines = [line for line in bot.log().splitlines() if line]
    assert "Ready: serving Telegram" in lines and "Frontdesk" in lines[0]
    assert not [line for line in lines if line[0].isspace() or line.startswith("<")]


def test_sigterm_mid_answer_then_answered_once_after_restart(
        tmp_path: Path, listener: NotifyListener) -> None:
    with SlowModel() as model, FakeTelegramServer() as telegram:
        env = {"NOTIFY_SOCKET": listener.name, "FRONTDESK_MODEL_PROVIDER": "openai",
               "OPENAI_BASE_URL": model.base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key"}
        bot = FrontdeskProcess(telegram, tmp_path, allowed=[CHAT], env=env)
        bot.start()
        listener.wait_for("READY=1")
        model.stall_s = 120.0  # the model is still thinking when systemd stops the bot
        telegram.push_message(CHAT, CHAT, "what should I pack for the trip?")
        bot.wait(lambda: not telegram.pending_updates() and len(model.requests) >= 1)
        assert terminate(bot) == 0
        assert sends_to(telegram, CHAT) == 0
        assert list(inbox(tmp_path).values()) == ["received"]  # open, for the next start

        model.stall_s = 0.0
        bot.start()
        assert bot.replies(CHAT, 1)[0].text.startswith("All set.")
        bot.poll(lambda: list(inbox(tmp_path).values()) == ["answered"])
        assert terminate(bot) == 0
        assert sends_to(telegram, CHAT) == 1


def test_sigterm_while_a_reply_is_on_its_way_lets_it_finish(
        tmp_path: Path, listener: NotifyListener) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, allowed=[CHAT],
                               env={"NOTIFY_SOCKET": listener.name})
        bot.start()
        listener.wait_for("READY=1")
        telegram.hold_answers(CHAT)  # Telegram has the reply; its answer is on the way
        telegram.push_message(CHAT, CHAT, "hello")
        bot.wait(lambda: telegram.answers_held)
        assert bot.proc is not None
        bot.proc.terminate()
        listener.wait_for("STOPPING=1")
        assert bot.proc.poll() is None  # waiting for the send, not cut off in the middle
        telegram.release_answers(CHAT)
        assert bot.proc.wait(TIMEOUT_STOP_S) == 0
        bot.proc = None
        with sqlite3.connect(tmp_path / "frontdesk.db") as conn:
            assert [s for (s,) in conn.execute("SELECT status FROM inbox")] == ["answered"]

        bot.start()  # nothing owed: the reply is not sent a second time
        telegram.push_message(CHAT, CHAT, "/help")
        bot.replies(CHAT, 2)
        assert terminate(bot) == 0
        assert sends_to(telegram, CHAT) == 2

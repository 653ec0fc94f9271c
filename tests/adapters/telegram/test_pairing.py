"""Pairing end to end on Telegram: `frontdesk run` against the fake Bot API, a
stranger's message, the owner's Allow pressed after a restart, the waiting message answered."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

from bot.access.pairing import ASKED
from tests.adapters.telegram.test_adapter_approvals import press, tokens
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import OWNER, STRANGER, FrontdeskProcess


def all_sent(home: Path) -> bool:
    with sqlite3.connect(home / "frontdesk.db") as conn:
        return conn.execute("SELECT COUNT(*) FROM outbox WHERE sent_at IS NULL").fetchone()[0] == 0


def test_allow_pressed_after_a_restart_answers_the_stranger(tmp_path: Path) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, env={"FRONTDESK_PAIRING": "ask"})
        telegram.add_chat(OWNER)  # the owner has started the bot
        bot.start()
        telegram.push_message(STRANGER, STRANGER, "remember that I like tea",
                              username="ann_tea")
        [asked] = bot.replies(STRANGER, 1)
        assert asked.text == ASKED
        [prompt] = bot.replies(OWNER, 1)
        assert str(STRANGER) in prompt.text and "remember that I like tea" in prompt.text
        assert "User 66 (@ann_tea)" in prompt.text  # name and username
        buttons = tokens(prompt)
        assert list(buttons) == ["Allow", "Block"]
        telegram.push_message(STRANGER, STRANGER, "hello?")  # no second prompt, no answer
        bot.wait(lambda: not telegram.pending_updates())
        bot.poll(lambda: all_sent(tmp_path))  # a kill mid-send would re-send (at least once)
        bot.kill()
        assert "the owner was asked" in bot.log() and str(STRANGER) in bot.log()
        assert ("Telegram:   @frontdesk_test_bot (id 123456), owner 42, also allowed: 43, 44"
                in bot.log())  # the start-up banner
        assert "Models:     offline" in bot.log() and f"Data:       {tmp_path}" in bot.log()

        bot.start()
        answer = press(telegram, bot, OWNER, prompt, buttons["Allow"])
        assert answer.get("text") == "Allow ✓"
        replies = bot.replies(STRANGER, 2)
        assert "tea" in replies[1].text  # the offline agent saved the waiting message's note
        telegram.push_message(STRANGER, STRANGER, "hi")
        bot.replies(STRANGER, 3)
        assert len(telegram.messages_to(OWNER)) == 1  # one prompt however many messages
        bot.stop()

    def people(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "bot.cli.main", "people", *args], env=bot.env,
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)

    listed = people()
    assert listed.returncode == 0 and str(STRANGER) in listed.stdout
    assert "allowed" in listed.stdout and "remember that I like tea" in listed.stdout
    assert "(@ann_tea)" in listed.stdout
    assert people("remove", str(STRANGER)).returncode == 0
    assert str(STRANGER) not in people().stdout
    assert people("remove", str(STRANGER)).returncode == 1

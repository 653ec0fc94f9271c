"""Nothing lost, nothing doubled: `frontdesk run` killed mid-work, long replies, many chats.

Each test starts its own bot process (and its own fake Telegram); the model is the fake
OpenAI server where a test needs to hold a model call open or script a long answer.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, text_reply
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import FrontdeskProcess

CHATS = (5101, 5102, 5103)


class SlowModel(FakeOpenAIServer):
    """Answers every call with ``reply_text`` after ``stall_s`` seconds (read per call)."""

    def __init__(self) -> None:
        super().__init__()
        self.stall_s = 0.0
        self.reply_text = "All set."
        self.responder = lambda request: text_reply(self.reply_text, stall_s=self.stall_s)


@pytest.fixture
def model() -> Iterator[SlowModel]:
    with SlowModel() as server:
        yield server


def with_model(model: FakeOpenAIServer) -> dict[str, str]:
    return {"FRONTDESK_MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-test-not-a-real-key"}


def inbox(home: Path) -> dict[str, str]:
    """Message id -> inbox status, read from the bot's database."""
    with sqlite3.connect(home / "frontdesk.db") as conn:
        return {f"{chat}/{message}": status for chat, message, status in conn.execute(
            "SELECT chat_id, message_id, status FROM inbox WHERE platform = 'telegram'")}


def test_updates_fetched_but_not_answered_survive_sigkill(tmp_path: Path,
                                                          model: SlowModel) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, allowed=CHATS, env=with_model(model))
        bot.start()
        model.stall_s = 120.0  # held until the server stops
        for chat in CHATS:
            telegram.push_message(chat, chat, "what should I pack for the trip?")
        # Telegram has forgotten them (the offset moved past them) and the model is working:
        bot.wait(lambda: not telegram.pending_updates() and len(model.requests) >= 1)
        assert not any(telegram.messages_to(chat) for chat in CHATS)
        bot.kill()

        model.stall_s = 0.0
        telegram.push_message(CHATS[0], CHATS[0], "/help")  # written while the bot was down
        bot.start()
        for chat in CHATS:
            assert bot.replies(chat, 1)[0].text.startswith("All set.")
        bot.replies(CHATS[0], 2)
        bot.poll(lambda: set(inbox(tmp_path).values()) == {"answered"})
        assert [len(telegram.messages_to(chat)) for chat in CHATS] == [2, 1, 1]
        assert telegram.messages_to(CHATS[0])[1].text.startswith("I'm Frontdesk")
        bot.stop()


def test_typing_shows_while_the_model_works(tmp_path: Path, model: SlowModel) -> None:
    model.stall_s = 1.0
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, allowed=[5301], env=with_model(model))
        bot.start()
        telegram.push_message(5301, 5301, "what should I pack for the trip?")
        bot.replies(5301, 1)
        methods = [(c.method, c.params.get("action")) for c in telegram.calls
                   if c.params.get("chat_id") == 5301]
        assert methods.index(("sendChatAction", "typing")) < methods.index(("sendMessage", None))
        bot.stop()


def test_a_long_reply_arrives_whole_in_numbered_parts(tmp_path: Path, model: SlowModel) -> None:
    paragraph = "The quick brown fox jumps over the lazy dog & the <cat>. " * 9
    code = "```python\n" + "\n".join(f"print({n})  # line {n}" for n in range(60)) + "\n```"
    model.reply_text = "\n\n".join([paragraph] * 6 + [code] + [paragraph] * 3)
    assert len(model.reply_text) > 5000
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, allowed=[5201], env=with_model(model))
        bot.start()
        telegram.push_message(5201, 5201, "write me the full trip plan please")
        bot.replies(5201, 2)
        bot.poll(lambda: set(inbox(tmp_path).values()) == {"answered"})
        parts = telegram.messages_to(5201)
        assert len(parts) == 2
        assert [p.text.rsplit("\n", 1)[1] for p in parts] == ["(1/2)", "(2/2)"]
        assert all(len(p.text) <= 4096 and p.parse_mode == "HTML" for p in parts)
        seen = "".join(p.text.rsplit("\n", 1)[0] for p in parts)
        assert seen.count("lazy dog & the <cat>") == 9 * 9
        assert all(f"print({n})" in seen for n in range(60))
        code_entities = [e for p in parts for e in p.entities if e["type"] == "pre"]
        assert code_entities, "the code block lost its formatting"
        bot.stop()


def test_two_hundred_chats_at_once_are_each_answered_exactly_once(tmp_path: Path) -> None:
    chats = list(range(7001, 7201))
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, allowed=chats)
        bot.start()
        for chat in chats:
            telegram.push_message(chat, chat, "hello")
        bot.wait(lambda: all(telegram.messages_to(chat) for chat in chats), timeout=90)
        bot.poll(lambda: len(inbox(tmp_path)) == 200
                 and set(inbox(tmp_path).values()) == {"answered"}, timeout=30)
        assert not telegram.pending_updates()
        assert sorted(len(telegram.messages_to(chat)) for chat in chats) == [1] * 200
        bot.stop()

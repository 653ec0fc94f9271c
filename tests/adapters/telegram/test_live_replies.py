"""Live replies on Telegram: `frontdesk run` (real python-telegram-bot, real openai SDK) against
the fake Bot API and a fake model that streams its answer over a few seconds.

Private chats see drafts, then the final message; groups see one message that grows and whose
last edit is the delivery; floods, refused drafts, FRONTDESK_STREAM=off, "typing…", and a
SIGKILL mid-stream: the partial message is edited to the final answer after the restart.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, text_reply
from tests.fakes.telegram_server import ApiCall, FakeTelegramServer
from tests.support.telegram_process import FrontdeskProcess

ANSWER = ("Here is the plan for the trip. Pack light: two shirts, a warm jumper and the good "
          "walking shoes. The train leaves at nine from platform four, so be there by "
          "half past eight. Bring the tickets and a book for the ride.")
QUESTION = "what should I pack for the trip?"
GROUP = -2001
INTERVAL = 0.3
LIVE_WRITES = ("sendMessageDraft", "editMessageText")
WAIT = 60.0  # a deadline, not a pace: the machine may be busy


class StreamingModel(FakeOpenAIServer):
    """Every call answers ANSWER; a streamed one takes ``chunk_delay_s`` per word."""

    def __init__(self) -> None:
        super().__init__()
        self.chunk_delay_s = 0.08
        self.responder = lambda request: text_reply(ANSWER)


@pytest.fixture
def model() -> Iterator[StreamingModel]:
    with StreamingModel() as server:
        yield server


@pytest.fixture
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        yield server


def start(telegram: FakeTelegramServer, home: Path, model: FakeOpenAIServer,
          chats: tuple[int, ...], **env: str) -> FrontdeskProcess:
    bot = FrontdeskProcess(telegram, home, allowed=chats, env={
        "FRONTDESK_MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": model.base_url,
        "OPENAI_API_KEY": "sk-test-not-a-real-key", "FRONTDESK_STREAM_INTERVAL": str(INTERVAL),
        **env})
    bot.start()
    return bot


def writes_to(telegram: FakeTelegramServer, chat: int, *methods: str) -> list[ApiCall]:
    return [c for c in telegram.calls if c.method in methods and c.params.get("chat_id") == chat]


def assert_paced(calls: list[ApiCall]) -> None:
    """At most one live write per interval (a little slack for the clocks of two processes)."""
    times = [c.at for c in calls]
    assert all(b - a >= INTERVAL * 0.8 for a, b in itertools.pairwise(times)), times


def test_a_private_chat_sees_drafts_then_one_final_message(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    chat = 6001
    bot = start(telegram, tmp_path, model, (chat,))
    telegram.push_message(chat, chat, QUESTION)
    [final] = bot.replies(chat, 1, WAIT)
    bot.stop()
    assert final.text == ANSWER and final.parse_mode == "HTML"
    drafts = telegram.drafts_to(chat)
    assert len(drafts) >= 3, drafts  # it grew in front of the reader
    assert all(d.endswith(" \u2026") and ANSWER.startswith(d[:-2]) for d in drafts)
    assert [len(d) for d in drafts] == sorted(len(d) for d in drafts)
    live = writes_to(telegram, chat, "sendMessageDraft")
    assert_paced(live)
    [send] = writes_to(telegram, chat, "sendMessage")
    assert all(c.at <= send.at for c in live), "a draft after the final message"
    assert not writes_to(telegram, chat, "editMessageText")


def test_a_group_sees_one_message_grow_and_its_last_edit_is_the_answer(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    member = 6002
    bot = start(telegram, tmp_path, model, (member,))
    telegram.push_message(GROUP, member, f"@frontdesk_test_bot {QUESTION}", chat_type="group")
    bot.wait(lambda: any(m.text == ANSWER for m in telegram.messages_to(GROUP)), WAIT)
    bot.stop()
    [message] = telegram.messages_to(GROUP)  # one message: the final edit was the delivery
    assert message.parse_mode == "HTML" and message.edits >= 2
    partials, final = message.history[:-1], message.history[-1]
    assert final == ANSWER
    assert all(p.endswith("\u2026") and ANSWER.startswith(p[:-2]) for p in partials)
    assert len(partials[0]) >= 40 or "." in partials[0]  # a sentence or so before sending
    assert len(writes_to(telegram, GROUP, "sendMessage")) == 1
    edits = writes_to(telegram, GROUP, "editMessageText")
    texts = [c.params["text"] for c in edits]
    assert len(texts) == len(set(texts)), "an edit that changed nothing"
    assert_paced([*writes_to(telegram, GROUP, "sendMessage"), *edits[:-1]])
    assert bot_answered_once(tmp_path)
    with sqlite3.connect(tmp_path / "frontdesk.db") as conn:  # the trace says when
        seen = dict(conn.execute("SELECT event, node FROM run_events WHERE event IN"
                                 " ('first_token', 'first_visible')").fetchall())
    assert seen == {"first_token": "full_agent", "first_visible": "full_agent"}


def test_where_drafts_are_refused_the_reply_grows_by_edits(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    chat = 6003
    telegram.refuse_drafts()
    bot = start(telegram, tmp_path, model, (chat,))
    telegram.push_message(chat, chat, QUESTION)
    bot.wait(lambda: any(m.text == ANSWER for m in telegram.messages_to(chat)), WAIT)
    bot.stop()
    [message] = telegram.messages_to(chat)
    assert message.edits >= 2 and len(writes_to(telegram, chat, "sendMessageDraft")) == 1


def test_three_flood_answers_end_the_live_updates_and_the_answer_still_arrives(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    member = 6004
    model.chunk_delay_s = 0.12
    bot = start(telegram, tmp_path, model, (member,))
    telegram.fail_next("editMessageText", 3, retry_after=1, chat_id=GROUP)
    telegram.push_message(GROUP, member, f"@frontdesk_test_bot {QUESTION}", chat_type="group")
    bot.wait(lambda: any(m.text == ANSWER for m in telegram.messages_to(GROUP)), WAIT)
    bot.stop()
    edits = writes_to(telegram, GROUP, "editMessageText")
    floods = [c for c in edits if c.error_code == 429]
    assert len(floods) == 3
    after = edits[edits.index(floods[-1]) + 1:]
    assert [c.params["text"] for c in after] == [ANSWER]  # only the final edit, no more live
    assert after[0].at - floods[-1].at >= 0.9  # retry_after honoured by the final write too
    for flood, following in itertools.pairwise(edits):  # each flood waited out
        if flood.error_code == 429:
            assert following.at - flood.at >= 0.9
    [message] = telegram.messages_to(GROUP)
    assert message.text == ANSWER


def test_stream_off_sends_the_answer_once_with_nothing_before_it(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    chat, member = 6005, 6006
    bot = start(telegram, tmp_path, model, (chat, member), FRONTDESK_STREAM="off")
    telegram.push_message(chat, chat, QUESTION)
    telegram.push_message(GROUP, member, f"@frontdesk_test_bot {QUESTION}", chat_type="group")
    [final] = bot.replies(chat, 1, WAIT)
    bot.replies(GROUP, 1, WAIT)
    bot.stop()
    assert final.text == ANSWER
    assert not [c for c in telegram.calls if c.method in LIVE_WRITES]
    assert not any(r.json.get("stream") for r in model.requests)


def test_typing_shows_while_the_turn_runs_and_stops_when_the_reply_goes_out(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    chat = 6007
    bot = start(telegram, tmp_path, model, (chat,), FRONTDESK_STREAM="off")
    telegram.push_message(chat, chat, QUESTION)
    bot.replies(chat, 1, WAIT)
    bot.stop()
    actions = writes_to(telegram, chat, "sendChatAction")
    [send] = writes_to(telegram, chat, "sendMessage")
    assert actions and all(a.params["action"] == "typing" for a in actions)
    assert all(a.at < send.at for a in actions), "typing… after the reply went out"


def test_killed_mid_stream_the_partial_message_is_edited_to_the_answer(
        telegram: FakeTelegramServer, model: StreamingModel, tmp_path: Path) -> None:
    member = 6008
    model.chunk_delay_s = 0.25
    bot = start(telegram, tmp_path, model, (member,))
    telegram.push_message(GROUP, member, f"@frontdesk_test_bot {QUESTION}", chat_type="group")
    bot.wait(lambda: any(m.edits >= 1 for m in telegram.messages_to(GROUP)), WAIT)
    bot.kill()  # SIGKILL mid-stream: a partial message is showing
    [left] = telegram.messages_to(GROUP)
    assert left.text.endswith("\u2026") and left.text != ANSWER
    model.chunk_delay_s = 0.02
    bot.start()
    bot.wait(lambda: any(m.text == ANSWER for m in telegram.messages_to(GROUP)), WAIT)
    bot.stop()
    messages = telegram.messages_to(GROUP) + telegram.deleted
    assert [m.message_id for m in telegram.messages_to(GROUP)] == [left.message_id]
    assert [m.text for m in messages] == [ANSWER]  # answered once, nothing left partial
    assert bot_answered_once(tmp_path)


def bot_answered_once(home: Path) -> bool:
    """Every message in the inbox answered, and no live message still waiting for its final."""
    with sqlite3.connect(home / "frontdesk.db") as conn:
        statuses = [s for (s,) in conn.execute("SELECT status FROM inbox")]
        left = conn.execute("SELECT count(*) FROM live_messages").fetchone()[0]
    return statuses == ["answered"] * len(statuses) and left == 0

"""`frontdesk run` on Telegram, as a subprocess against the fake Bot API: what people see.

One bot process (offline model) serves every test of this module; each test writes in chats
of its own, so the order the tests run in does not matter.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from bot.chat.commands import COMMANDS, START_TEXT
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.telegram_process import ALLOWED, OWNER, STRANGER, FrontdeskProcess

FRIEND = ALLOWED[0]
GROUP = -1001
REFUSAL = "Sorry, I only work for the people I've been set up for."


@pytest.fixture(scope="module")
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        yield server


@pytest.fixture(scope="module")
def bot(telegram: FakeTelegramServer,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontdeskProcess]:
    process = FrontdeskProcess(telegram, tmp_path_factory.mktemp("frontdesk"),
                               allowed=[*ALLOWED, *range(5001, 5010)])
    process.start()
    yield process
    process.stop()
    assert telegram.token not in process.log(), "the bot token reached the log"


def test_start_on_launch_registers_the_commands(telegram: FakeTelegramServer,
                                                bot: FrontdeskProcess) -> None:
    [menu] = telegram.commands.values()
    assert [c["command"] for c in menu] == ["start", *[name for name, _ in COMMANDS]]
    assert telegram.calls_of("deleteWebhook")[0].params.get("drop_pending_updates") in (None,
                                                                                        False)
    assert telegram.dropped_pending_updates == 0


def test_start_says_what_the_bot_is(telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    telegram.push_message(5001, 5001, "/start")
    [reply] = bot.replies(5001, 1)
    assert reply.text.startswith("Hello! I'm Frontdesk")
    assert "/draft" in reply.text and len(reply.text) < len(START_TEXT) + 20


def test_a_private_message_is_answered_once(telegram: FakeTelegramServer,
                                            bot: FrontdeskProcess) -> None:
    telegram.push_message(FRIEND, FRIEND, "hi there")
    [reply] = bot.replies(FRIEND, 1)
    assert "offline" in reply.text
    assert reply.parse_mode == "HTML"
    sends = telegram.calls_of("sendMessage")
    assert [c.params["chat_id"] for c in sends].count(FRIEND) == 1


def test_a_stranger_is_refused_once_per_chat(telegram: FakeTelegramServer,
                                            bot: FrontdeskProcess) -> None:
    telegram.push_message(STRANGER, STRANGER, "hello?")
    bot.replies(STRANGER, 1)
    telegram.push_message(STRANGER, STRANGER, "hello??")
    # The same stranger in a group, then an allowed person there: the group's messages are
    # answered in order, so once the last one is answered the others were handled too.
    telegram.push_message(GROUP, STRANGER, "@frontdesk_test_bot let me in", chat_type="group")
    telegram.push_message(GROUP, STRANGER, "@frontdesk_test_bot please", chat_type="group")
    telegram.push_message(GROUP, FRIEND, "@frontdesk_test_bot /help", chat_type="group")
    group = bot.replies(GROUP, 2)
    assert group[0].text == REFUSAL
    assert group[1].text.startswith("I'm Frontdesk")  # the mention was taken out of "/help"
    assert [m.text for m in telegram.messages_to(STRANGER)] == [REFUSAL]
    assert all((chat, "typing") not in telegram.chat_actions for chat in (STRANGER, GROUP))


def test_in_a_group_only_mentions_and_replies_are_answered(
        telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    group = GROUP - 1
    telegram.push_message(group, FRIEND, "hi everyone", chat_type="supergroup")
    telegram.push_message(group, FRIEND, "/help@some_other_bot", chat_type="supergroup")
    telegram.push_message(group, FRIEND, "hi @FrontDesk_Test_Bot", chat_type="supergroup")
    [first] = bot.replies(group, 1)
    telegram.push_message(group, FRIEND, "thanks all", chat_type="supergroup")
    telegram.push_message(group, FRIEND, "/notes", chat_type="supergroup",
                          reply_to=first.message_id)
    answers = bot.replies(group, 2)
    assert answers[1].text.startswith("You have no notes yet")
    assert len(telegram.messages_to(group)) == 2


def test_a_malformed_update_does_not_stall_the_others(telegram: FakeTelegramServer,
                                                      bot: FrontdeskProcess) -> None:
    telegram.push_raw_update({"message": {"message_id": "not a number", "chat": 7}})
    telegram.push_message(5002, 5002, "/help")
    [reply] = bot.replies(5002, 1)
    assert reply.text.startswith("I'm Frontdesk")


def test_the_same_message_delivered_twice_is_answered_once(
        telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    update = telegram.push_message(5003, 5003, "hello")
    telegram.push_raw_update({"message": update["message"]})  # a new update id, same message
    bot.replies(5003, 1)
    telegram.push_message(5003, 5003, "/help")  # answered after the duplicate was handled
    replies = bot.replies(5003, 2)
    assert len(telegram.messages_to(5003)) == 2
    assert "offline" in replies[0].text and replies[1].text.startswith("I'm Frontdesk")


def test_formatting_refused_by_telegram_is_resent_as_plain_text(
        telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    telegram.fail_next("sendMessage", error_code=400, chat_id=5004,
                       description="Bad Request: can't parse entities: Unsupported start tag")
    telegram.push_message(5004, 5004, "/help")
    [reply] = bot.replies(5004, 1)
    assert reply.parse_mode is None and reply.text.startswith("I'm Frontdesk")
    assert "<" not in reply.raw_text


def test_flood_control_is_waited_out_in_that_chat_only(telegram: FakeTelegramServer,
                                                       bot: FrontdeskProcess) -> None:
    telegram.flood(5005, times=1, retry_after=2)
    telegram.push_message(5005, 5005, "/help")
    bot.wait(lambda: any(c.error_code == 429 for c in telegram.calls_of("sendMessage")
                         if c.params.get("chat_id") == 5005))
    flooded_at = time.monotonic()
    telegram.push_message(5006, 5006, "/help")
    bot.replies(5006, 1)
    other_chat_at = time.monotonic()
    [reply] = bot.replies(5005, 1)
    answered_at = time.monotonic()
    assert reply.text.startswith("I'm Frontdesk")  # sent in full, not dropped
    assert other_chat_at < answered_at  # the other chat did not wait for this one
    assert answered_at - flooded_at >= 1.5  # retry_after was obeyed


def test_an_urgent_message_reaches_the_owners_chat(telegram: FakeTelegramServer,
                                                   bot: FrontdeskProcess) -> None:
    telegram.add_chat(OWNER)  # the owner has started the bot, so it may write to them
    before = len(telegram.messages_to(OWNER))
    telegram.push_message(5007, 5007, "urgent: the server room is flooding")
    [told] = bot.replies(5007, 1)
    assert "passed your message on to the owner" in told.text
    notice = bot.replies(OWNER, before + 1)[before]
    assert notice.text.startswith("Urgent message from") and "telegram:5007" in notice.text
    assert "server room is flooding" in notice.text

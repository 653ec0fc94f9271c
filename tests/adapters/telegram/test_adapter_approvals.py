"""Approvals on Telegram: `/draft` reaches the owner with inline buttons, and only the owner's
press decides; the bot is `frontdesk run` as a subprocess against the fake Bot API."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.telegram_server import FakeTelegramServer, SentMessage
from tests.support.telegram_process import ALLOWED, OWNER, FrontdeskProcess

FRIEND = ALLOWED[0]
LABELS = ["Approve", "Revise", "Discard"]


@pytest.fixture(scope="module")
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        yield server


@pytest.fixture(scope="module")
def bot(telegram: FakeTelegramServer,
        tmp_path_factory: pytest.TempPathFactory) -> Iterator[FrontdeskProcess]:
    process = FrontdeskProcess(telegram, tmp_path_factory.mktemp("frontdesk"))
    process.start()
    yield process
    process.stop()


def draft(telegram: FakeTelegramServer, bot: FrontdeskProcess, brief: str) -> SentMessage:
    """Ask for a draft as the owner; the bot's message that carries the buttons."""
    before = len(telegram.messages_to(OWNER))
    telegram.push_message(OWNER, OWNER, f"/draft {brief}")
    message = bot.replies(OWNER, before + 1)[-1]
    assert message.reply_markup is not None, message.text
    return message


def tokens(message: SentMessage) -> dict[str, str]:
    """Button label -> callback_data."""
    assert message.reply_markup is not None
    return {b["text"]: b["callback_data"] for row in message.reply_markup["inline_keyboard"]
            for b in row}


def press(telegram: FakeTelegramServer, bot: FrontdeskProcess, user: int, message: SentMessage,
          data: str) -> dict[str, object]:
    """Press a button as ``user``; the bot's answer to the callback query."""
    query_id = telegram.push_callback(user, message.message_id, data, chat_id=message.chat_id)
    return bot.wait(lambda: next((a for a in telegram.callback_answers
                                  if a["callback_query_id"] == query_id), None))


def current(telegram: FakeTelegramServer, message: SentMessage) -> SentMessage:
    """The message as it stands now."""
    return next(m for m in telegram.messages_to(message.chat_id)
                if m.message_id == message.message_id)


def edited(telegram: FakeTelegramServer, bot: FrontdeskProcess,
           message: SentMessage) -> SentMessage:
    """The message once the bot has edited it."""
    return bot.wait(lambda: current(telegram, message) if current(telegram, message).edits
                    else None)


def test_a_draft_waits_for_the_owner_behind_opaque_buttons(
        telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    message = draft(telegram, bot, "a thank-you note to Ann for the flowers")
    assert "thank-you note to Ann" in message.text
    buttons = tokens(message)
    assert list(buttons) == LABELS
    assert len(set(buttons.values())) == 3
    for data in buttons.values():
        assert len(data.encode()) <= 64
        # No run id ("m-" and 20 hex digits; a random token may hold "m-" by chance) and no
        # answer in clear.
        assert re.search(r"m-[0-9a-f]{20}", data) is None and "Approve" not in data


def test_only_the_owner_decides_and_the_message_shows_the_decision(
        telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    message = draft(telegram, bot, "a note to Bob about the keys")
    buttons = tokens(message)

    refused = press(telegram, bot, FRIEND, message, buttons["Approve"])
    assert refused["text"] == "Only the owner can do that." and refused["show_alert"] is True
    forged = press(telegram, bot, OWNER, message, "x" * 22)
    assert forged["text"] == "This button is not valid (anymore)."
    assert current(telegram, message).reply_markup is not None  # nothing was decided

    before = len(telegram.messages_to(OWNER))
    accepted = press(telegram, bot, OWNER, message, buttons["Approve"])
    assert accepted["text"] == "Approve ✓"
    decided = edited(telegram, bot, message)
    assert decided.reply_markup is None
    assert decided.text.startswith(message.text) and decided.text.endswith("Decision: Approve")
    saved = bot.replies(OWNER, before + 1)[before]
    assert saved.text.startswith("Approved and saved as note #")

    again = press(telegram, bot, OWNER, message, buttons["Discard"])
    assert again["text"] == "This was already decided."
    assert len(telegram.messages_to(OWNER)) == before + 1  # nothing else happened


def test_the_same_button_pressed_again_after_its_run_ended_is_already_decided(
        telegram: FakeTelegramServer, bot: FrontdeskProcess) -> None:
    message = draft(telegram, bot, "a note to Carol about the party")
    approve = tokens(message)["Approve"]
    before = len(telegram.messages_to(OWNER))
    assert press(telegram, bot, OWNER, message, approve)["text"] == "Approve ✓"
    assert bot.replies(OWNER, before + 1)[before].text.startswith("Approved and saved")
    # A new callback query for the same button (not the replay of the first one).
    again = press(telegram, bot, OWNER, message, approve)
    assert again["text"] == "This was already decided."
    assert len(telegram.messages_to(OWNER)) == before + 1  # and nothing was sent again


def test_a_press_on_a_cancelled_request_says_so(telegram: FakeTelegramServer,
                                               bot: FrontdeskProcess) -> None:
    message = draft(telegram, bot, "a reminder to water the plants")
    answer = ""
    while answer != "Nothing is waiting in this chat.":  # /cancel takes the oldest wait first
        before = len(telegram.messages_to(OWNER))
        telegram.push_message(OWNER, OWNER, "/cancel")
        answer = bot.replies(OWNER, before + 1)[before].text
        assert answer in {"Cancelled the waiting run.", "Nothing is waiting in this chat."}
    late = press(telegram, bot, OWNER, message, tokens(message)["Approve"])
    assert late["text"] == "This request was cancelled."


def test_a_restart_between_the_buttons_and_the_press_loses_nothing(tmp_path: Path) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path)
        bot.start()
        message = draft(telegram, bot, "a postcard to Grandma")
        bot.kill()
        bot.start()
        before = len(telegram.messages_to(OWNER))
        answer = press(telegram, bot, OWNER, message, tokens(message)["Discard"])
        assert answer["text"] == "Discard ✓"
        done = bot.replies(OWNER, before + 1)[before]
        assert done.text == "Discarded the draft; nothing was saved."
        decided = edited(telegram, bot, message)
        assert decided.reply_markup is None and decided.text.endswith("Decision: Discard")
        bot.stop()

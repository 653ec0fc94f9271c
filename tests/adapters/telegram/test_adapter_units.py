"""The Telegram adapter's pure parts: reading updates, flood waits, webhook settings."""

from __future__ import annotations

import datetime as dtm
from typing import Any

import pytest
import telegram
from telegram.error import RetryAfter

from bot.adapters.telegram.adapter import retry_after_seconds
from bot.adapters.telegram.updates import Press, Unreadable, parse_update
from bot.adapters.telegram.webhook import WebhookConfig
from bot.messages import IncomingMessage

ME = telegram.User(123456, "Frontdesk", is_bot=True, username="frontdesk_test_bot")
BOT = telegram.Bot("123456:TEST-token")  # never initialised: no request is made


def update(text: str, *, chat_type: str = "group", entities: list[dict[str, Any]] | None = None,
           reply_to_bot: bool = False, update_id: int = 1) -> dict[str, Any]:
    message: dict[str, Any] = {
        "message_id": 7, "date": 0, "text": text,
        "chat": {"id": -5 if chat_type != "private" else 9, "type": chat_type},
        "from": {"id": 9, "is_bot": False, "first_name": "Ann"}}
    if entities:
        message["entities"] = entities
    if reply_to_bot:
        message["reply_to_message"] = {"message_id": 6, "date": 0, "text": "earlier",
                                       "chat": message["chat"],
                                       "from": {"id": ME.id, "is_bot": True, "first_name": "F"}}
    return {"update_id": update_id, "message": message}


def mention(text: str, word: str, kind: str = "mention") -> list[dict[str, Any]]:
    return [{"type": kind, "offset": text.index(word), "length": len(word)}]


def read(raw: dict[str, Any]) -> IncomingMessage | Press | Unreadable | None:
    return parse_update(raw, BOT, ME)


def test_a_private_message_is_read_as_is() -> None:
    msg = read(update("hello there", chat_type="private"))
    assert msg == IncomingMessage("telegram", "9", "7", "9", "hello there", "Ann", True)


@pytest.mark.parametrize(("raw", "text"), [
    (update("hi all"), None),
    (update("hi @frontdesk_test_bot, how are you?",
            entities=mention("hi @frontdesk_test_bot, how", "@frontdesk_test_bot")),
     "hi , how are you?"),
    (update("@someone_else look", entities=mention("@someone_else look", "@someone_else")),
     None),
    (update("and tomorrow?", reply_to_bot=True), "and tomorrow?"),
    (update("/help", entities=mention("/help", "/help", "bot_command")), "/help"),
    (update("/help@frontdesk_test_bot",
            entities=mention("/help@frontdesk_test_bot", "/help@frontdesk_test_bot",
                             "bot_command")), "/help@frontdesk_test_bot"),
    (update("/help@other_bot", entities=mention("/help@other_bot", "/help@other_bot",
                                                "bot_command")), None),
    (update("@frontdesk_test_bot", entities=mention("@frontdesk_test_bot",
                                                    "@frontdesk_test_bot")), None),
])
def test_in_a_group_only_what_is_addressed_to_the_bot_is_read(raw: dict[str, Any],
                                                              text: str | None) -> None:
    msg = read(raw)
    assert (msg.text if isinstance(msg, IncomingMessage) else None) == text
    if isinstance(msg, IncomingMessage):
        assert not msg.is_private


def test_a_malformed_update_is_reported_not_raised() -> None:
    unreadable = read({"update_id": 3, "message": {"message_id": "x", "chat": 1}})
    assert isinstance(unreadable, Unreadable)
    assert (unreadable.update_id, unreadable.chat_id, unreadable.message_id) == (3, "?", "x")
    caption = {**update("x", chat_type="private")["message"], "caption": ["a", "list"]}
    del caption["text"]
    assert isinstance(read({"update_id": 5, "message": caption}), Unreadable)
    assert read({"update_id": 4, "edited_message": update("x")["message"]}) is None


def test_a_press_keeps_what_the_edit_needs() -> None:
    message = update("Draft: <b>hi</b>", chat_type="private")["message"]
    message["from"] = {"id": ME.id, "is_bot": True, "first_name": "F"}
    raw = {"update_id": 11, "callback_query": {
        "id": "q1", "chat_instance": "c", "data": "tok", "message": message,
        "from": {"id": 42, "is_bot": False, "first_name": "Owner"}}}
    press = read(raw)
    assert isinstance(press, Press)
    assert (press.user_id, press.data, press.chat_id, press.message_id) == ("42", "tok", "9", 7)
    assert press.message_html == "Draft: &lt;b&gt;hi&lt;/b&gt;"
    assert Press.from_json(press.to_json()) == press


@pytest.mark.filterwarnings("ignore::telegram.warnings.PTBDeprecationWarning")  # in __init__
@pytest.mark.parametrize("value", [3, dtm.timedelta(seconds=3)])
def test_retry_after_is_read_whether_int_or_timedelta(value: int | dtm.timedelta) -> None:
    assert retry_after_seconds(RetryAfter(value)) == 3.0


def test_webhook_settings() -> None:
    assert WebhookConfig.from_env({}) is None
    config = WebhookConfig.from_env({"FRONTDESK_TELEGRAM_WEBHOOK_URL": "https://me.example/tg/x",
                                     "FRONTDESK_TELEGRAM_WEBHOOK_LISTEN": "0.0.0.0:9000"})
    assert config is not None
    assert (config.host, config.port, config.path) == ("0.0.0.0", 9000, "/tg/x")
    assert len(config.secret) >= 32 and config.secret not in repr(config)
    again = WebhookConfig.from_env({"FRONTDESK_TELEGRAM_WEBHOOK_URL": "https://me.example/"})
    assert again is not None and again.secret != config.secret  # random when not set
    assert (again.host, again.port) == ("127.0.0.1", 8443)

"""The fake Telegram Bot API, driven by the real python-telegram-bot ``Bot`` over HTTP."""

from __future__ import annotations

import asyncio
import datetime as dtm
import threading
import warnings

import httpx
import pytest
import telegram
from telegram import InlineKeyboardButton, InlineKeyboardMarkup
from telegram.error import BadRequest, Conflict, InvalidToken, RetryAfter
from telegram.warnings import PTBUserWarning

from tests.fakes.telegram_server import FakeTelegramServer

OWNER = 42


def keyboard(*data: str) -> InlineKeyboardMarkup:
    return InlineKeyboardMarkup([[InlineKeyboardButton(d.title(), callback_data=d) for d in data]])


async def test_get_me_is_the_bot_of_the_token(bot: telegram.Bot) -> None:
    me = await bot.get_me()
    assert (me.id, me.is_bot, me.username) == (123456, True, "frontdesk_test_bot")


async def test_wrong_token_is_refused(telegram_server: FakeTelegramServer) -> None:
    stranger = telegram.Bot("123456:WRONG", base_url=telegram_server.base_url)
    try:
        with pytest.raises(InvalidToken):
            await stranger.initialize()
    finally:
        await stranger.shutdown()
    assert telegram_server.calls_of("getMe")[-1].error_code == 401


async def test_updates_stay_until_an_offset_confirms_them(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    for text in ("one", "two", "three"):
        telegram_server.push_message(OWNER, OWNER, text)
    first = await bot.get_updates()
    assert [u.message.text for u in first if u.message] == ["one", "two", "three"]
    again = await bot.get_updates(limit=2)  # not confirmed yet: delivered again, limited
    assert [u.update_id for u in again] == [u.update_id for u in first[:2]]
    rest = await bot.get_updates(offset=first[0].update_id + 1)
    assert [u.message.text for u in rest if u.message] == ["two", "three"]
    assert await bot.get_updates(offset=first[-1].update_id + 1) == ()
    assert telegram_server.pending_updates() == []


async def test_long_poll_answers_as_soon_as_an_update_arrives(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    poll = asyncio.create_task(bot.get_updates(timeout=30))
    await telegram_server.wait_for(lambda: telegram_server.polls == 1)
    assert not poll.done()
    telegram_server.push_message(OWNER, OWNER, "wake up")
    updates = await asyncio.wait_for(poll, 5)  # far below the poll's own 30 s
    assert [u.message.text for u in updates if u.message] == ["wake up"]


async def test_long_poll_with_nothing_queued_ends_empty_at_its_timeout(
        bot: telegram.Bot) -> None:
    assert await asyncio.wait_for(bot.get_updates(timeout=1), 10) == ()


async def test_a_newer_poll_ends_the_older_one_with_conflict(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    older = asyncio.create_task(bot.get_updates(timeout=30))
    await telegram_server.wait_for(lambda: telegram_server.polls == 1)
    # a second bot process (one Bot polls through a single connection)
    async with telegram.Bot(telegram_server.token, base_url=telegram_server.base_url) as second:
        newer = asyncio.create_task(second.get_updates(timeout=30))
        with pytest.raises(Conflict):
            await asyncio.wait_for(older, 5)
        telegram_server.push_message(OWNER, OWNER, "for the newer")
        assert len(await asyncio.wait_for(newer, 5)) == 1


async def test_commands_and_mentions_carry_entities_and_replies_quote(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    telegram_server.add_chat(-100, "supergroup")
    mine = await bot.send_message(-100, "I am the bot")
    telegram_server.push_message(-100, 7, "/help@frontdesk_test_bot please", chat_type="supergroup")
    telegram_server.push_message(-100, 7, "hey @frontdesk_test_bot", chat_type="supergroup")
    telegram_server.push_message(-100, 7, "yes you", chat_type="supergroup",
                                 reply_to=mine.message_id)
    command, mention, reply = [u.message for u in await bot.get_updates()]
    assert command and mention and reply
    assert command.chat.type == "supergroup" and command.from_user and command.from_user.id == 7
    assert command.parse_entities(["bot_command"]).popitem()[1] == "/help@frontdesk_test_bot"
    assert list(mention.parse_entities(["mention"]).values()) == ["@frontdesk_test_bot"]
    assert reply.reply_to_message and reply.reply_to_message.from_user
    assert reply.reply_to_message.from_user.id == (await bot.get_me()).id


async def test_send_message_html_is_parsed_like_telegram(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    telegram_server.add_chat(OWNER)
    message = await bot.send_message(OWNER, "<b>Hi</b> &lt;you&gt; 😀 <i>x</i>",
                                     parse_mode="HTML", reply_markup=keyboard("approve", "discard"))
    assert message.text == "Hi <you> 😀 x"
    assert [(e.type, e.offset, e.length) for e in message.entities] == [
        ("bold", 0, 2), ("italic", 12, 1)]  # the emoji counts 2 UTF-16 units
    sent, = telegram_server.messages_to(OWNER)
    assert sent.text == "Hi <you> 😀 x" and sent.parse_mode == "HTML"
    assert sent.reply_markup == keyboard("approve", "discard").to_dict()


@pytest.mark.parametrize("html, why", [
    ("a < b", 'Unsupported start tag "" at byte offset 2'),
    ("<b>open", "Can't find end tag"),
    ("<b>x</i>", "Unmatched end tag"),
    ("<script>x</script>", 'Unsupported start tag "script"'),
    ("<a href=x", "Unclosed start tag"),
])
async def test_bad_html_is_refused_and_nothing_is_sent(
        telegram_server: FakeTelegramServer, bot: telegram.Bot, html: str, why: str) -> None:
    telegram_server.add_chat(OWNER)
    with pytest.raises(BadRequest, match=r"(?i)parse entities") as refused:
        await bot.send_message(OWNER, html, parse_mode="HTML")
    assert why.lower() in str(refused.value).lower()  # PTB lower-cases the first letter
    assert telegram_server.messages_to(OWNER) == []
    assert telegram_server.calls_of("sendMessage")[-1].error_code == 400


async def test_too_long_empty_and_unknown_chat_are_refused(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    telegram_server.add_chat(OWNER)
    await bot.send_message(OWNER, "<b>" + "x" * 4096 + "</b>", parse_mode="HTML")  # tags free
    with pytest.raises(BadRequest, match=r"(?i)too long"):
        await bot.send_message(OWNER, "😀" * 2049)  # 2,049 characters, 4,098 UTF-16 units
    with pytest.raises(BadRequest, match=r"(?i)empty"):
        await bot.send_message(OWNER, "<b> </b>", parse_mode="HTML")
    with pytest.raises(BadRequest, match=r"(?i)chat not found"):
        await bot.send_message(999, "who?")
    with pytest.raises(BadRequest, match=r"(?i)BUTTON_DATA_INVALID"):
        await bot.send_message(OWNER, "x", reply_markup=keyboard("y" * 65))
    assert len(telegram_server.messages_to(OWNER)) == 1


async def test_flood_control_answers_429_with_retry_after_for_that_chat_only(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    telegram_server.add_chat(OWNER)
    telegram_server.add_chat(7)
    telegram_server.flood(OWNER, times=2, retry_after=3)
    for _ in range(2):
        with pytest.raises(RetryAfter) as flooded:
            await bot.send_message(OWNER, "part 1")
        assert flooded.value.retry_after == dtm.timedelta(seconds=3)
    await bot.send_message(7, "other chat is not limited")
    await bot.send_message(OWNER, "part 1")
    assert [m.text for m in telegram_server.messages_to(OWNER)] == ["part 1"]
    assert [c.error_code for c in telegram_server.calls_of("sendMessage")] == [
        429, 429, None, None]


async def test_callback_query_round_trip(telegram_server: FakeTelegramServer,
                                         bot: telegram.Bot) -> None:
    telegram_server.add_chat(OWNER)
    asked = await bot.send_message(OWNER, "Publish?", reply_markup=keyboard("approve", "discard"))
    query_id = telegram_server.push_callback(OWNER, asked.message_id, "approve")
    update, = await bot.get_updates()
    query = update.callback_query
    assert query and query.id == query_id and query.data == "approve"
    assert query.from_user.id == OWNER and query.message and query.message.message_id == \
        asked.message_id
    assert await bot.answer_callback_query(query.id, text="Approved")
    with pytest.raises(BadRequest, match=r"(?i)query ID is invalid"):
        await bot.answer_callback_query(query.id, text="twice")
    edited = await bot.edit_message_text("Publish? <b>Approved</b>", OWNER, asked.message_id,
                                         parse_mode="HTML")
    assert isinstance(edited, telegram.Message) and edited.text == "Publish? Approved"
    sent, = telegram_server.messages_to(OWNER)
    assert (sent.text, sent.reply_markup, sent.edits) == ("Publish? Approved", None, 1)
    with pytest.raises(BadRequest, match=r"(?i)not modified"):
        await bot.edit_message_text("Publish? <b>Approved</b>", OWNER, asked.message_id,
                                    parse_mode="HTML")
    await bot.edit_message_reply_markup(OWNER, asked.message_id, reply_markup=keyboard("undo"))
    assert telegram_server.messages_to(OWNER)[0].reply_markup == keyboard("undo").to_dict()
    assert telegram_server.callback_answers == [
        {"callback_query_id": query_id, "text": "Approved"}]


async def test_chat_action_and_commands(telegram_server: FakeTelegramServer,
                                        bot: telegram.Bot) -> None:
    telegram_server.add_chat(OWNER)
    assert await bot.send_chat_action(OWNER, "typing")
    assert await bot.set_my_commands([("help", "What I can do"), ("draft", "Write a draft")])
    assert [c.command for c in await bot.get_my_commands()] == ["help", "draft"]
    with pytest.raises(BadRequest, match=r"(?i)BOT_COMMAND_INVALID"):
        await bot.set_my_commands([("Bad-Name", "x")])
    assert telegram_server.chat_actions == [(OWNER, "typing")]


async def test_delete_webhook_keeps_pending_updates_unless_asked(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    telegram_server.push_message(OWNER, OWNER, "sent while the bot was down")
    assert await bot.delete_webhook()
    assert len(telegram_server.pending_updates()) == 1
    assert await bot.delete_webhook(drop_pending_updates=True)
    assert telegram_server.pending_updates() == [] and telegram_server.dropped_pending_updates == 1


async def test_raw_updates_and_json_bodies_pass_as_telegram_would(
        telegram_server: FakeTelegramServer) -> None:
    update_id = telegram_server.push_raw_update({"message": {"text": "no chat, no id"}})
    async with httpx.AsyncClient(base_url=telegram_server.base_url + telegram_server.token) as c:
        body = (await c.post("/getUpdates", json={"offset": 0, "timeout": 0})).json()
        assert body == {"ok": True, "result": [
            {"update_id": update_id, "message": {"text": "no chat, no id"}}]}
        missing = await c.post("/noSuchMethod", json={})
        assert missing.status_code == 404 and missing.json()["ok"] is False


def test_in_a_background_thread_for_subprocess_tests() -> None:
    with FakeTelegramServer() as server:
        server.add_chat(OWNER)
        url = f"{server.base_url}{server.token}/sendMessage"

        def client() -> None:  # stands for `frontdesk run` in another process
            httpx.post(url, data={"chat_id": str(OWNER), "text": "from elsewhere"})

        threading.Thread(target=client).start()
        sent = server.wait_for_sync(lambda: server.messages_to(OWNER))
        assert sent[0].text == "from elsewhere"
        with pytest.raises(TimeoutError):
            server.wait_for_sync(lambda: server.messages_to(7), timeout=0.2)


async def test_threaded_server_can_be_awaited_from_a_test_loop() -> None:
    with FakeTelegramServer() as server:
        async with telegram.Bot(server.token, base_url=server.base_url) as bot:
            server.push_message(OWNER, OWNER, "hello")
            poll = asyncio.create_task(bot.get_updates(timeout=5))
            await server.wait_for(lambda: server.polls >= 1)
            update, = await poll
            assert update.message and update.message.text == "hello"


async def test_one_malformed_update_fails_a_whole_get_updates_batch(
        telegram_server: FakeTelegramServer, bot: telegram.Bot) -> None:
    """Why the adapter should fetch raw updates and parse them one by one."""
    telegram_server.push_message(OWNER, OWNER, "before")
    telegram_server.push_raw_update({"message": {"text": "no date, no chat"}})
    telegram_server.push_message(OWNER, OWNER, "after")
    with pytest.raises(KeyError):
        await bot.get_updates()
    with warnings.catch_warnings():  # PTB suggests Bot.get_updates, which parses the batch
        warnings.simplefilter("ignore", PTBUserWarning)
        raw = await bot.do_api_request("getUpdates", api_kwargs={"timeout": 0})
    texts = []
    for update in raw:
        try:
            message = telegram.Update.de_json(update, bot).message
            texts.append(message.text if message else None)
        except KeyError:
            texts.append("malformed")
    assert texts == ["before", "malformed", "after"]

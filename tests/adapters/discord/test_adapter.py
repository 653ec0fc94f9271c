"""``frontdesk run`` as a subprocess against the fake Discord: what people see, and nothing twice.

Messages, the typing indicator, server etiquette (mention or reply only), long replies under
rate limits, slash commands, catch-up after downtime, reconnects, and a missing intent.
Approvals are in ``test_adapter_approvals.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.access.pairing import REFUSAL
from bot.chat.commands import COMMANDS
from tests.adapters.discord.bot_process import FrontdeskProcess
from tests.fakes.discord_server import BOT_ID, CHANNEL_ID, OWNER_ID, FakeDiscord

JSON = dict[str, Any]


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    with FakeDiscord().in_thread() as server:
        yield server


@pytest.fixture
def bot(fake: FakeDiscord, tmp_path: Path) -> Iterator[FrontdeskProcess]:
    with FrontdeskProcess(fake, tmp_path, allowed=(OWNER_ID + 100,)) as process:
        yield process
    assert fake.token not in process.output()  # the token never reaches the logs


def contents(fake: FakeDiscord, channel_id: int) -> list[str]:
    return [m["content"] for m in fake.sent_to(channel_id)]


def wait_for_reply(fake: FakeDiscord, channel_id: int, text: str, timeout: float = 20) -> str:
    """The first message the bot sent to a channel containing ``text``."""
    def found() -> str | None:
        return next((c for c in contents(fake, channel_id) if text in c), None)
    reply = fake.wait_for_blocking(found, timeout=timeout, what=f"a reply with {text!r}")
    assert reply is not None
    return reply


def test_a_dm_is_answered_with_typing_and_the_bots_echo_is_ignored(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    fake.push_message("remember that the gate code is 4711")
    dm = fake.dm_channel_id(OWNER_ID)
    wait_for_reply(fake, dm, "gate code is 4711")
    assert fake.typing.get(dm, 0) >= 1
    fake.push_message("remember that the plants need water")
    wait_for_reply(fake, dm, "plants need water")
    # Discord echoed both replies back to the bot; neither was taken for a message to answer.
    assert len(contents(fake, dm)) == 2
    registered = fake.wait_for_blocking(lambda: fake.commands.get(None), what="slash commands")
    assert [c["name"] for c in registered or []] == [name for name, _ in COMMANDS]


def test_on_a_server_only_mentions_and_replies_are_answered(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    fake.push_message("remember that nobody asked me", guild=True)
    fake.push_message("remember that the meeting moved", guild=True, mention_bot=True)
    first = wait_for_reply(fake, CHANNEL_ID, "meeting moved")
    assert f"<@{BOT_ID}>" not in first  # the mention is not part of what was understood
    replied_to = fake.sent_to(CHANNEL_ID)[0]
    fake.push_message("remember that replies count too", guild=True, reply_to=replied_to)
    wait_for_reply(fake, CHANNEL_ID, "replies count too")
    assert not any("nobody asked" in c for c in contents(fake, CHANNEL_ID))
    assert len(contents(fake, CHANNEL_ID)) == 2


def test_a_stranger_is_refused_once(fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    for text in ("hello?", "anyone?"):
        fake.push_message(text, author=fake.stranger)
    dm = fake.dm_channel_id(int(fake.stranger["id"]))
    wait_for_reply(fake, dm, REFUSAL)
    fake.push_message("remember that the owner still gets answers")
    wait_for_reply(fake, fake.dm_channel_id(OWNER_ID), "still gets answers")
    assert contents(fake, dm) == [REFUSAL]


def test_a_2500_character_reply_arrives_in_numbered_parts_through_rate_limits(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    long_note = " ".join(f"word{i:04d}" for i in range(300))  # 2,699 characters
    fake.rate_limit(2, retry_after=0.3)
    fake.push_message(f"remember that {long_note}")
    dm = fake.dm_channel_id(OWNER_ID)

    def statuses() -> list[int]:  # a call's status is recorded once its answer is made
        return [c.status for c in fake.calls
                if c.method == "POST" and c.path == f"/channels/{dm}/messages"]

    fake.wait_for_blocking(lambda: len(contents(fake, dm)) >= 2 and "(2/2)" in
                           contents(fake, dm)[-1] and statuses().count(200) >= 2,
                           timeout=30, what="both parts")
    parts = contents(fake, dm)
    assert [p.split("\n", 1)[0] for p in parts] == ["(1/2)", "(2/2)"]
    assert all(len(p) <= 2000 for p in parts)
    words = " ".join(p.split("\n", 1)[1] for p in parts).split()
    assert [w for w in words if w.startswith("word")] == long_note.split()  # nothing lost
    assert statuses().count(429) == 2 and statuses().count(200) == 2
    assert fake.rate_limit_violations == []
    assert len({nonce for channel, nonce in fake.nonces if channel == dm}) == 2  # one per part


def test_messages_sent_while_the_bot_was_down_are_answered_once_after_start(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    dm = fake.dm_channel_id(OWNER_ID)
    fake.push_message("remember that I was here first")
    fake.push_message("remember that the door is blue", guild=True, mention_bot=True)
    wait_for_reply(fake, dm, "here first")
    wait_for_reply(fake, CHANNEL_ID, "door is blue")
    bot.stop()

    fake.push_message("remember that you were away", dispatch=False)
    fake.push_message("remember that two things happened", dispatch=False)
    fake.push_message("remember that this one is not for you", guild=True, dispatch=False)
    fake.push_message("remember that the window is green", guild=True, mention_bot=True,
                      dispatch=False)
    bot.start()
    wait_for_reply(fake, dm, "two things happened")
    wait_for_reply(fake, CHANNEL_ID, "window is green")
    fake.push_message("remember that live messages still work")
    wait_for_reply(fake, dm, "still work")
    texts = contents(fake, dm)
    assert [t.split(": ", 1)[-1].split("\n")[0] for t in texts] == [
        "I was here first", "you were away", "two things happened", "live messages still work"]
    assert not any("not for you" in t for t in contents(fake, CHANNEL_ID))
    assert len(contents(fake, CHANNEL_ID)) == 2


def test_a_message_redelivered_after_a_resume_is_answered_once(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    dm = fake.dm_channel_id(OWNER_ID)
    first = fake.push_message("remember that I said this once")
    wait_for_reply(fake, dm, "said this once")
    fake.drop_connection()
    fake.wait_for_blocking(lambda: fake.resumes, what="a RESUME")
    fake.dispatch("MESSAGE_CREATE", first)  # Discord may deliver an event again
    fake.push_message("remember that this came after")
    wait_for_reply(fake, dm, "came after")
    assert len(fake.identifies) == 1
    assert sum("said this once" in c for c in contents(fake, dm)) == 1


def test_after_a_refused_resume_the_new_session_catches_up(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    dm = fake.dm_channel_id(OWNER_ID)
    fake.push_message("remember that the first session saw this")
    wait_for_reply(fake, dm, "first session")
    fake.refuse_next_resume()
    fake.drop_connection()
    fake.push_message("remember that this fell between sessions", dispatch=False)
    wait_for_reply(fake, dm, "between sessions")
    assert len(fake.identifies) == 2
    assert len(contents(fake, dm)) == 2


def test_without_the_message_content_intent_run_stops_with_a_clear_message(
        tmp_path: Path) -> None:
    with FakeDiscord(message_content_enabled=False).in_thread() as fake, \
            FrontdeskProcess(fake, tmp_path) as bot:
        bot.start(wait_connected=False)
        code = bot.wait()
        assert code != 0
        assert "Message Content Intent" in bot.output()
        assert "Traceback" not in bot.output()
        assert fake.token not in bot.output()


def test_an_urgent_message_reaches_the_owner_by_dm(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    friend = fake.add_user("friend", OWNER_ID + 100)  # in DISCORD_ALLOWED_USERS
    bot.start()
    fake.push_message("urgent: the server room is flooding", author=friend)
    notice = wait_for_reply(fake, fake.dm_channel_id(OWNER_ID), "server room is flooding")
    assert notice.startswith("**Urgent message from")
    wait_for_reply(fake, fake.dm_channel_id(int(friend["id"])), "passed your message on")

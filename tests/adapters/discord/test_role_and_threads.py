"""On a server, a mention of the bot's managed role counts as a mention of the bot, and a
mention in a thread is answered in that thread; `frontdesk run` against the fake."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.discord.bot_process import FrontdeskProcess
from tests.adapters.discord.test_adapter import contents, wait_for_reply
from tests.fakes.discord_server import BOT_ROLE_ID, CHANNEL_ID, THREAD_ID, FakeDiscord


def test_the_managed_role_mention_and_a_thread_are_answered(tmp_path: Path) -> None:
    with FakeDiscord().in_thread() as fake, FrontdeskProcess(fake, tmp_path) as bot:
        bot.start()
        fake.push_message("remember that the role counts", guild=True, mention_role=True)
        reply = wait_for_reply(fake, CHANNEL_ID, "role counts")
        assert f"<@&{BOT_ROLE_ID}>" not in reply  # the mention is not part of what was read
        fake.push_message("remember that threads work", thread=True, mention_bot=True)
        wait_for_reply(fake, THREAD_ID, "threads work")
        assert not any("threads work" in text for text in contents(fake, CHANNEL_ID))
        fake.push_message("remember that this is not for the bot", guild=True)
        bot.wait_all_sent()
        assert len(contents(fake, CHANNEL_ID)) == 1 and len(contents(fake, THREAD_ID)) == 1

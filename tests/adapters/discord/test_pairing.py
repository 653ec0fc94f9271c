"""Pairing end to end on Discord, and the start-up banner: `frontdesk run` against
the fake Discord, a stranger's DM, the owner's Allow pressed after a SIGKILL and a restart."""

from __future__ import annotations

from pathlib import Path

from bot.access.pairing import ASKED
from tests.adapters.discord.bot_process import FrontdeskProcess
from tests.adapters.discord.test_adapter import contents, wait_for_reply
from tests.adapters.discord.test_adapter_approvals import buttons_of, draft_with_buttons, press
from tests.fakes.discord_server import BOT_ID, OWNER_ID, FakeDiscord


def test_allow_pressed_after_a_restart_answers_the_stranger(tmp_path: Path) -> None:
    with FakeDiscord().in_thread() as fake, \
            FrontdeskProcess(fake, tmp_path, extra_env={"FRONTDESK_PAIRING": "ask"}) as bot:
        bot.start()
        fake.push_message("remember that I like tea", author=fake.stranger)
        stranger_dm = fake.dm_channel_id(int(fake.stranger["id"]))
        wait_for_reply(fake, stranger_dm, ASKED)
        owner_dm = fake.dm_channel_id(OWNER_ID)
        prompt = draft_with_buttons(fake, owner_dm)
        assert fake.stranger["id"] in prompt["content"] and "discord" in prompt["content"]
        assert "(@`stranger`)" in prompt["content"]  # their handle as code: never a link
        assert list(buttons_of(prompt)) == ["Allow", "Block"]
        fake.push_message("hello?", author=fake.stranger)  # no second prompt, no answer
        bot.wait_all_sent()
        bot.kill()

        bot.start()
        assert press(fake, buttons_of(prompt)["Allow"], prompt) == "Allow ✓"
        wait_for_reply(fake, stranger_dm, "tea")  # the waiting message, answered
        fake.push_message("remember that I allowed you", author=fake.stranger)
        wait_for_reply(fake, stranger_dm, "allowed you")
        assert len(contents(fake, owner_dm)) == 1  # one prompt however many messages
        assert contents(fake, stranger_dm)[0] == ASKED and contents(fake, stranger_dm).count(
            ASKED) == 1

        banner = bot.output()
        assert f"(id {BOT_ID}), owner {OWNER_ID}" in banner and "Models:     offline" in banner
        assert "Pairing:    ask" in banner and str(tmp_path) in banner
        assert "voice will NOT be supported" not in banner  # discord.py's notice, silenced
        assert fake.token not in banner

"""``frontdesk run`` on Discord killed at chosen points: nothing sent to it is skipped.

The fake Discord holds a channel's history read open, so the bot is killed at the exact
moment it has seen live messages in a channel it has not yet read back.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.discord.bot_process import FrontdeskProcess
from tests.fakes.discord_server import CHANNEL_ID, OWNER_ID, FakeDiscord


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    with FakeDiscord().in_thread() as server:
        yield server


def replies_with(fake: FakeDiscord, channel_id: int, text: str) -> list[str]:
    return [m["content"] for m in fake.sent_to(channel_id) if text in m["content"]]


def wait_for_reply(fake: FakeDiscord, channel_id: int, text: str) -> None:
    fake.wait_for_blocking(lambda: replies_with(fake, channel_id, text), timeout=20,
                           what=f"a reply with {text!r}")


def inbox_status(home: Path, message_id: str) -> str | None:
    with sqlite3.connect(home / "frontdesk.db", timeout=10) as conn:
        row = conn.execute("SELECT status FROM inbox WHERE message_id = ?",
                           (message_id,)).fetchone()
    return str(row[0]) if row else None


def test_a_message_sent_while_down_is_answered_though_live_ones_came_before_the_read_back(
        fake: FakeDiscord, tmp_path: Path) -> None:
    with FrontdeskProcess(fake, tmp_path) as bot:
        bot.start()
        fake.push_message("remember that the channel is known", guild=True, mention_bot=True)
        wait_for_reply(fake, CHANNEL_ID, "channel is known")
        bot.wait_all_sent()
        bot.stop()

        fake.push_message("remember that I wrote while you were away", guild=True,
                          mention_bot=True, dispatch=False)
        fake.hold_history(CHANNEL_ID)  # the read-back of this channel waits
        bot.start()
        fake.wait_for_blocking(lambda: CHANNEL_ID in fake.history_reads_held, timeout=20,
                               what="the read-back of the channel")
        fake.push_message("remember that this one came live", guild=True, mention_bot=True)
        wait_for_reply(fake, CHANNEL_ID, "came live")  # answered, and its echo seen
        # Gateway events are taken in order: once this DM is in the inbox, the bot has also
        # taken the echo of the live reply, which came before it.
        barrier = fake.push_message("remember that this DM comes last")
        fake.wait_for_blocking(lambda: inbox_status(tmp_path, str(barrier["id"])),
                               timeout=20, what="the DM in the inbox")
        bot.kill()  # before the read-back of the channel got its answer

        fake.release_history(CHANNEL_ID)
        bot.start()
        wait_for_reply(fake, CHANNEL_ID, "while you were away")
        wait_for_reply(fake, fake.dm_channel_id(OWNER_ID), "comes last")
        for text in ("channel is known", "came live", "while you were away"):
            assert len(replies_with(fake, CHANNEL_ID, text)) == 1, text

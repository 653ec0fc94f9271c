"""Live replies on Discord: `frontdesk run` (real discord.py, real openai SDK) against the fake
Discord and a fake model that streams: one message that grows by edits, whose last edit is
the answer, with "typing…" before it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adapters.discord.bot_process import FrontdeskProcess
from tests.fakes.discord_server import OWNER_ID, FakeDiscord
from tests.fakes.openai_server import FakeOpenAIServer, text_reply

ANSWER = ("Here is the plan for the trip. Pack light: two shirts, a warm jumper and the good "
          "walking shoes. The train leaves at nine from platform four, so be there by "
          "half past eight. Bring the tickets and a book for the ride.")


@pytest.fixture
def model() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        server.responder = lambda request: text_reply(ANSWER)
        server.chunk_delay_s = 0.08
        yield server


def test_a_dm_grows_by_edits_and_its_last_edit_is_the_answer(
        model: FakeOpenAIServer, tmp_path: Path) -> None:
    with FakeDiscord().in_thread() as fake, FrontdeskProcess(fake, tmp_path, extra_env={
            "FRONTDESK_MODEL_PROVIDER": "openai", "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-test-not-a-real-key",
            "FRONTDESK_STREAM_INTERVAL": "0.3"}) as bot:
        bot.start()
        fake.push_message("what should I pack for the trip?")
        dm = fake.dm_channel_id(OWNER_ID)
        fake.wait_for_blocking(
            lambda: any(m["content"] == ANSWER for m in fake.sent_to(dm)), timeout=60,
            what="the whole answer")
        [message] = fake.sent_to(dm)  # one message: the final edit was the delivery
        edits = fake.edits[message["id"]]
        assert len(edits) >= 2 and edits[-1] == ANSWER
        partials = edits[:-1]
        assert all(e.endswith("\u2026") and ANSWER.startswith(e[:-2]) for e in partials)
        assert len(edits) == len(set(edits)), "an edit that changed nothing"
        assert fake.typing.get(dm, 0) >= 1
        posts = [c for c in fake.calls if c.method == "POST" and c.path.endswith("/messages")
                 and c.path.startswith(f"/channels/{dm}/")]
        assert len(posts) == 1 and not fake.deleted

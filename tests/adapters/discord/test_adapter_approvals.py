"""Approvals on Discord through ``/draft``, with ``frontdesk run`` as a subprocess.

The draft arrives with Approve / Revise / Discard buttons whose ``custom_id`` carries the
gateway's token; the buttons keep working after a SIGKILL and a restart; every press is
acknowledged within Discord's 3 seconds; only the owner's press decides.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.chat.decisions import NOT_OWNER, STALE
from tests.adapters.discord.bot_process import FrontdeskProcess
from tests.fakes.discord_server import CHANNEL_ID, OWNER_ID, FakeDiscord

JSON = dict[str, Any]
DEFERRED_UPDATE = 6  # the silent acknowledgement of a component press


@pytest.fixture
def fake() -> Iterator[FakeDiscord]:
    with FakeDiscord().in_thread() as server:
        yield server


@pytest.fixture
def bot(fake: FakeDiscord, tmp_path: Path) -> Iterator[FrontdeskProcess]:
    with FrontdeskProcess(fake, tmp_path) as process:
        yield process


def buttons_of(message: JSON) -> dict[str, str]:
    """Label -> custom_id of a message's buttons."""
    return {button["label"]: button["custom_id"]
            for row in message.get("components", []) for button in row["components"]}


def draft_with_buttons(fake: FakeDiscord, channel_id: int) -> JSON:
    draft = fake.wait_for_blocking(
        lambda: next((m for m in fake.sent_to(channel_id) if m.get("components")), None),
        timeout=30, what="a draft with buttons")
    assert draft is not None
    return draft


def press(fake: FakeDiscord, custom_id: str, message: JSON,
          presser: JSON | None = None) -> str:
    """Press a button; wait for the private answer to the presser and return its text."""
    interaction = fake.push_interaction(custom_id, message=message, presser=presser)
    token = interaction["token"]
    notes = fake.wait_for_blocking(
        lambda: [c for c in fake.calls if c.method == "POST" and token in c.path
                 and c.path.startswith("/webhooks/")],
        timeout=30, what="the private answer to a press")
    acknowledgements = [r for r in fake.interaction_responses
                        if r["interaction_id"] == int(interaction["id"])]
    assert [r["type"] for r in acknowledgements] == [DEFERRED_UPDATE]  # in time, once
    body = notes[0].body
    assert body["flags"] & 64  # ephemeral: only the presser sees it
    return str(body["content"])


def test_a_press_after_sigkill_and_restart_completes_the_run(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    fake.push_message("/draft a thank-you note to Ann for the flowers")
    dm = fake.dm_channel_id(OWNER_ID)
    draft = draft_with_buttons(fake, dm)
    assert "Approve, Revise or Discard?" in draft["content"]
    custom_ids = buttons_of(draft)
    assert list(custom_ids) == ["Approve", "Revise", "Discard"]
    assert all(cid.startswith("fd:") and len(cid) < 100 for cid in custom_ids.values())

    bot.wait_all_sent()
    bot.kill()  # the approval is waiting; nothing in the bot survives but its database
    bot.start()
    assert press(fake, custom_ids["Approve"], draft) == "Approve ✓"
    saved = fake.wait_for_blocking(
        lambda: next((m for m in fake.sent_to(dm) if "Approved and saved" in m["content"]),
                     None), timeout=30, what="the end of the run")
    assert saved is not None and "thank-you note to Ann" in saved["content"]
    edited = fake.find_message(draft["id"])
    assert edited is not None and edited["components"] == []
    assert edited["content"].endswith("**Decision: Approve**")
    assert edited["content"].startswith(draft["content"])
    # the draft, then the saved note: nothing sent twice across the crash
    assert [m["id"] for m in fake.sent_to(dm)] == [draft["id"], saved["id"]]


def test_strangers_second_and_forged_presses_get_a_short_private_answer(
        fake: FakeDiscord, bot: FrontdeskProcess) -> None:
    bot.start()
    fake.push_message("/draft a notice about the new opening hours", guild=True,
                      mention_bot=True)
    draft = draft_with_buttons(fake, CHANNEL_ID)
    original = copy.deepcopy(draft)
    custom_ids = buttons_of(draft)

    assert press(fake, custom_ids["Discard"], draft, presser=fake.stranger) == NOT_OWNER
    stored = fake.find_message(draft["id"])
    assert stored is not None and buttons_of(stored) == custom_ids  # nothing decided

    assert press(fake, custom_ids["Discard"], draft) == "Discard ✓"
    fake.wait_for_blocking(lambda: any("Discarded the draft" in m["content"]
                                       for m in fake.sent_to(CHANNEL_ID)),
                           timeout=30, what="the discard")
    assert fake.find_message(draft["id"])["components"] == []  # type: ignore[index]

    # Another device still shows the old buttons: a second press is told it is decided.
    restore_buttons(fake, draft["id"], original["components"])
    assert press(fake, custom_ids["Approve"], draft) == STALE["answered"]
    # A button whose token the bot never issued (e.g. from a wiped database).
    forged = copy.deepcopy(original["components"])
    forged[0]["components"][0]["custom_id"] = "fd:forged-token-123"
    restore_buttons(fake, draft["id"], forged)
    assert press(fake, "fd:forged-token-123", draft) == "This button is not valid (anymore)."
    texts = [m["content"] for m in fake.sent_to(CHANNEL_ID)]
    assert not any("Approved and saved" in t for t in texts)


def restore_buttons(fake: FakeDiscord, message_id: str, components: list[JSON]) -> None:
    with fake._lock:
        message = fake.find_message(message_id)
        assert message is not None
        message["components"] = copy.deepcopy(components)

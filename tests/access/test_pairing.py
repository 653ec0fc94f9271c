"""Pairing at the gateway: a stranger asks the owner once; Allow answers their
waiting message and lets them in for good, Block keeps them refused; never a model call for a
stranger; a press after a restart still works; the terminal names the stranger once."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.access.pairing import ASKED, LIMIT, REFUSAL, REVIEW_BATCH, SUMMARY, WINDOW_S, prompt_key
from bot.messages import IncomingMessage
from tests.support.harness import (
    OWNER,
    OWNER_CHAT,
    STRANGER,
    FakeClock,
    Harness,
    HarnessFactory,
    until,
)

PAIRING = {"FRONTDESK_PAIRING": "ask"}


def prompt_buttons(harness: Harness, msg: IncomingMessage) -> dict[str, str]:
    """Label -> token of the owner's prompt about the stranger who sent ``msg``."""
    key = prompt_key("telegram", msg.user_id, msg.message_id)
    [part] = harness.services.delivery.parts.parts("telegram", OWNER_CHAT, key)
    assert part.buttons is not None
    return {b["label"]: b["token"] for b in part.buttons}


async def answered(harness: Harness) -> None:
    """Wait until the allowed person's waiting message is answered."""
    await asyncio.gather(*harness.gateway.answering)


async def test_a_stranger_asks_the_owner_once_and_no_model_is_called(
        make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PAIRING)
    hello = harness.message("hello, I'm Ann", STRANGER, name="Ann Smith")
    first = await harness.gateway.handle(hello)
    assert first is not None and (first.route, first.text) == ("refused", ASKED)
    for text in ("are you there?", "please answer"):
        assert await harness.gateway.handle(harness.message(text, STRANGER)) is None
    assert harness.adapter.to(STRANGER) == [ASKED]
    [prompt] = harness.adapter.to(OWNER_CHAT)
    assert "Ann Smith" in prompt and STRANGER in prompt and "telegram" in prompt
    assert "hello, I'm Ann" in prompt.replace("\\", "")
    assert list(prompt_buttons(harness, hello)) == ["Allow", "Block"]
    assert harness.small.history == [] and harness.big.history == []


async def test_allow_after_a_restart_answers_the_waiting_message_and_lets_them_in(
        make_harness: HarnessFactory) -> None:
    before = await make_harness(**PAIRING)
    asked = before.message("what's on today?", STRANGER)
    await before.gateway.handle(asked)
    token = prompt_buttons(before, asked)["Allow"]
    after = await make_harness(**PAIRING)  # a new process on the same database
    result = await after.gateway.press("telegram", OWNER, token)
    assert result.accepted and result.alert == "Allow ✓"
    assert result.edit_text is not None and STRANGER in result.edit_text
    await answered(after)
    [reply] = after.adapter.to(STRANGER)
    assert "what's on today?" in reply  # the PurposeModel echoes what it answered
    later = await after.send("and tomorrow?", STRANGER)
    assert later.route != "refused" and "and tomorrow?" in later.text
    again = await after.gateway.press("telegram", OWNER, prompt_buttons(after, asked)["Block"])
    assert not again.accepted and "already decided" in again.alert
    assert after.services.admission.people.status("telegram", STRANGER) == "allowed"


async def test_block_keeps_them_refused(make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PAIRING)
    hi = harness.message("hi", STRANGER)
    await harness.gateway.handle(hi)
    result = await harness.gateway.press("telegram", OWNER, prompt_buttons(harness, hi)["Block"])
    assert result.accepted and result.alert == "Block ✓"
    assert await harness.gateway.handle(harness.message("hi again", STRANGER)) is not None
    assert await harness.gateway.handle(harness.message("hello?", STRANGER)) is None
    assert harness.adapter.to(STRANGER) == [ASKED, REFUSAL]
    assert harness.small.history == [] and harness.big.history == []
    assert harness.services.admission.people.status("telegram", STRANGER) == "blocked"


async def test_only_the_owner_can_press(make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PAIRING)
    hi = harness.message("hi", STRANGER)
    await harness.gateway.handle(hi)
    result = await harness.gateway.press("telegram", STRANGER, prompt_buttons(harness, hi)["Allow"])
    assert not result.accepted
    assert harness.services.admission.people.status("telegram", STRANGER) == "asked"


async def test_after_remove_they_ask_again(make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PAIRING)
    first = harness.message("hi", STRANGER)
    await harness.gateway.handle(first)
    await harness.gateway.press("telegram", OWNER, prompt_buttons(harness, first)["Allow"])
    await answered(harness)
    assert harness.services.admission.people.remove(STRANGER) == 1  # `frontdesk people remove`
    second = harness.message("hello again", STRANGER)
    reply = await harness.gateway.handle(second)
    assert reply is not None and reply.text == ASKED
    assert list(prompt_buttons(harness, second)) == ["Allow", "Block"]
    assert len(harness.adapter.to(OWNER_CHAT)) == 2


async def test_pairing_off_refuses_and_tells_the_terminal_once_per_person(
        harness: Harness, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="frontdesk.access"):
        for text in ("hi", "hello?"):
            await harness.gateway.handle(harness.message(text, STRANGER, name="Bob"))
    assert harness.adapter.to(STRANGER) == [REFUSAL]
    [line] = [r.getMessage() for r in caplog.records if r.name == "frontdesk.access"]
    assert STRANGER in line and "Bob" in line and "TELEGRAM_ALLOWED_USERS" in line
    assert "FRONTDESK_PAIRING=ask" in line


async def test_a_missing_owner_id_is_said_with_the_writer_s_id(
        make_harness: HarnessFactory, caplog: pytest.LogCaptureFixture) -> None:
    harness = await make_harness(TELEGRAM_OWNER_ID="", **PAIRING)
    with caplog.at_level(logging.WARNING, logger="frontdesk.access"):
        reply = await harness.gateway.handle(harness.message("hi", OWNER))
    assert reply is not None and reply.text == REFUSAL  # no owner to ask: refused as before
    [line] = [r.getMessage() for r in caplog.records if r.name == "frontdesk.access"]
    assert f"TELEGRAM_OWNER_ID={OWNER}" in line


async def test_200_strangers_give_the_owner_a_few_prompts_and_one_summary_nothing_lost(
        make_harness: HarnessFactory, home: Path) -> None:
    harness = await make_harness(**PAIRING)
    hours = FakeClock()
    strangers = harness.gateway.strangers
    strangers.clock, strangers.sleep = hours, hours.sleep
    asks = [harness.message(f"hello from {n}", str(5000 + n), name=f"Person {n}")
            for n in range(200)]
    for ask in asks:
        reply = await harness.gateway.handle(ask)
        assert reply is not None and reply.text == ASKED
    assert len(harness.adapter.to(OWNER_CHAT)) == LIMIT  # the rest are held, not sent
    people = harness.services.admission.people
    assert all(people.status("telegram", a.user_id) == "asked" for a in asks)

    hours.advance(WINDOW_S + 1)  # the next slot opens: one summary of everyone held
    await until(lambda: len(harness.adapter.to(OWNER_CHAT)) == LIMIT + 1)
    summary = harness.adapter.to(OWNER_CHAT)[-1]
    assert f"{200 - LIMIT} more people asked" in summary and "frontdesk people" in summary
    assert "Person 5" in summary and "5005" in summary  # the first held one is named
    assert not any(key.startswith("pairing:") for key in outbox_keys(harness)[LIMIT + 1:])

    listed = subprocess.run([sys.executable, "-m", "bot.cli.main", "people", "--limit", "200"],
                            env={**os.environ, "FRONTDESK_HOME": str(home)},
                            capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0
    assert all(a.user_id in listed.stdout for a in asks)  # all 200 listed for review

    [summary_key] = [k for k in outbox_keys(harness) if k.startswith(SUMMARY)]
    [part] = harness.services.delivery.parts.parts("telegram", OWNER_CHAT, summary_key)
    assert part.buttons is not None
    review = await harness.gateway.press("telegram", OWNER, part.buttons[0]["token"])
    assert review.accepted
    await until(lambda: not strangers.reviewing)
    owner = harness.adapter.to(OWNER_CHAT)
    assert len(owner) == LIMIT + 1 + REVIEW_BATCH + 1  # ten prompts, then "185 more ..."
    assert f"{200 - LIMIT - REVIEW_BATCH} more people" in owner[-1]

    allowed = asks[LIMIT]  # the first held one, now with its own prompt
    result = await harness.gateway.press("telegram", OWNER,
                                         prompt_buttons(harness, allowed)["Allow"])
    assert result.accepted
    await answered(harness)
    assert harness.adapter.to(allowed.user_id)[0] == ASKED
    [answer] = harness.adapter.to(allowed.user_id)[1:]  # answered once
    assert f"hello from {LIMIT}" in answer


def outbox_keys(harness: Harness) -> list[str]:
    rows = harness.services.delivery.inbox.conn.execute(
        "SELECT DISTINCT reply_key FROM outbox WHERE chat_id = ? ORDER BY id", (OWNER_CHAT,))
    return [str(row[0]) for row in rows]


HOSTILE_NAME = "Eve\u202eevil\x1b[2J\x1b]0;owned\x07 id 1."


async def test_a_stranger_s_controls_and_bidi_overrides_never_reach_the_owner(
        make_harness: HarnessFactory, home: Path, caplog: pytest.LogCaptureFixture) -> None:
    harness = await make_harness(**PAIRING)
    with caplog.at_level(logging.WARNING, logger="frontdesk.access"):
        await harness.gateway.handle(harness.message("hi\u202e \x1b[31mred\x1b[0m", STRANGER,
                                                     name=HOSTILE_NAME))
    [prompt] = harness.adapter.to(OWNER_CHAT)
    [line] = [r.getMessage() for r in caplog.records if r.name == "frontdesk.access"]
    listed = subprocess.run([sys.executable, "-m", "bot.cli.main", "people"],
                            env={**os.environ, "FRONTDESK_HOME": str(home)},
                            capture_output=True, text=True, timeout=60)
    for shown in (prompt, line, listed.stdout):
        assert "\u202e" not in shown and "\x1b" not in shown and "\x07" not in shown
        assert "Eve" in shown and STRANGER in shown
    assert "red" in prompt and f"id {STRANGER}." in prompt


async def test_strangers_held_back_are_summarised_at_the_next_start_once_a_slot_opened(
        make_harness: HarnessFactory) -> None:
    hours = FakeClock()
    before = await make_harness(clock=hours, sleep=hours.sleep, **PAIRING)
    for n in range(LIMIT + 3):
        await before.gateway.handle(before.message(f"hi {n}", str(6000 + n)))
    assert len(before.adapter.to(OWNER_CHAT)) == LIMIT  # three held back
    later = FakeClock()  # a new process an hour on (the first one's timer stays asleep)
    later.now = hours.now + WINDOW_S + 1
    after = await make_harness(clock=later, sleep=later.sleep, **PAIRING)
    # sent by the start itself (to the owner as configured: no adapter is attached yet),
    # before any new stranger wrote
    summaries = [text for _, text in after.adapter.sent if "3 more people asked" in text]
    assert len(summaries) == 1


async def test_the_strangers_name_and_words_are_code_in_the_owners_card(
        make_harness: HarnessFactory) -> None:
    """A URL in a stranger's name or words is shown as code: never a live link."""
    harness = await make_harness(**PAIRING)
    await harness.gateway.handle(harness.message("see https://evil.example/x now", STRANGER,
                                                 name="https://evil.example/me"))
    [prompt] = harness.adapter.to(OWNER_CHAT)
    assert "`https://evil.example/me`" in prompt
    assert "`see https://evil.example/x now`" in prompt and f"id {STRANGER}." in prompt

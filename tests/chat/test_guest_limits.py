"""One guest cannot spend the owner's day: past their messages an hour or their spend a day
they get one plain sentence and no model call; their message is kept (inbox, history, a run
the dashboard lists); the owner and the other guests are answered as before."""

from __future__ import annotations

import time
from dataclasses import replace

from bot.chat.guest_limits import ROUTE, SPENT, TOO_MANY, WORKFLOW
from bot.config.settings import Settings
from bot.messages import Attachment
from tests.support.harness import GUEST, OWNER, Harness, HarnessFactory

OTHER = "300"  # a second allowed guest
TWO_GUESTS = {"TELEGRAM_ALLOWED_USERS": f"{GUEST},{OTHER}"}


def calls(h: Harness) -> int:
    """Every model call so far, small and big."""
    return len(h.small.history) + len(h.big.history)


async def test_past_the_days_spend_a_guest_gets_one_sentence_and_no_model_call(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GUEST_DAILY_USD="0.25", **TWO_GUESTS)
    h.big.enqueue(text="Here is a long and costly answer.", cost_usd=0.30)
    first = await h.send("please research the history of tea in detail", GUEST)
    assert first.text == "Here is a long and costly answer."
    store = h.services.flows.store
    assert store.spent_by(f"telegram:{GUEST}", time.time() - 3600, 0) >= 0.30
    before = calls(h)
    limited = await h.send("and now the history of coffee", GUEST, message_id="g-2")
    assert (limited.text, limited.route) == (SPENT, ROUTE)
    assert calls(h) == before  # no model was asked
    assert h.adapter.to(GUEST)[-1] == SPENT
    # kept: answered in the inbox, in the chat's history, a run of its own on the dashboard
    inbox = h.services.delivery.inbox
    assert inbox.status("telegram", GUEST, "g-2") == "answered"
    history = h.services.memory.history(f"telegram:chat:{GUEST}")
    assert ("user", "and now the history of coffee") in history
    run = store.run(limited.run_id or "")
    assert run is not None and run.workflow == WORKFLOW and run.status == "completed"
    assert run.meta["user"] == f"telegram:{GUEST}" and "coffee" in run.meta["words"]
    # the owner and the other guest are untouched
    owner = await h.send("what is the history of coffee?", OWNER)
    assert owner.route != ROUTE and calls(h) > before
    other = await h.send("what is the history of coffee?", OTHER)
    assert other.route != ROUTE and other.text.startswith(("agent:", "quick:"))
    # a command that calls no model still works for the limited guest
    assert "/notes" in (await h.send("/help", GUEST)).text


async def test_past_the_hours_messages_a_guest_gets_one_sentence_and_no_model_call(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GUEST_MESSAGES_PER_HOUR="3", **TWO_GUESTS)
    for n in range(3):
        reply = await h.send(f"question number {n}, what is on today?", GUEST)
        assert reply.route != ROUTE
    before = calls(h)
    for n in range(2):  # the sentence each time, and a limited turn does not count again
        limited = await h.send(f"one more question {n}", GUEST)
        assert (limited.text, limited.route) == (TOO_MANY.format(limit=3), ROUTE)
    assert calls(h) == before
    assert h.services.flows.store.messages_of(f"telegram:{GUEST}", time.time() - 3600,
                                              but=WORKFLOW) == 3
    assert (await h.send("question from someone else", OTHER)).route != ROUTE
    assert (await h.send("question from the owner", OWNER)).route != ROUTE
    assert calls(h) > before


async def test_an_hour_later_the_guest_is_answered_again(make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GUEST_MESSAGES_PER_HOUR="1")
    await h.send("first question of the hour", GUEST)
    assert (await h.send("second question", GUEST)).route == ROUTE
    limits = h.services.chat.answerer.gates[0]
    later = time.time() + 3601
    limits.clock = lambda: later  # type: ignore[attr-defined]
    assert (await h.send("a question an hour later", GUEST)).route != ROUTE


def test_the_caps_are_settings_checked_like_the_others() -> None:
    base = {"FRONTDESK_HOME": "/tmp/frontdesk-test"}
    assert Settings.from_env(base).guest_daily_usd is None  # no budget, no share of it
    budget = Settings.from_env({**base, "FRONTDESK_DAILY_BUDGET_USD": "2"})
    assert (budget.guest_daily_usd, budget.guest_messages_per_hour) == (0.5, 30)
    assert budget.writes_per_second == 25.0
    for name, bad in (("FRONTDESK_GUEST_DAILY_USD", "lots"),
                      ("FRONTDESK_GUEST_MESSAGES_PER_HOUR", "-3"),
                      ("FRONTDESK_WRITES_PER_SECOND", "0")):
        try:
            Settings.from_env({**base, name: bad})
        except ValueError as error:
            assert str(error).startswith(name) and "\n" not in str(error)
        else:
            raise AssertionError(f"{name}={bad!r} was taken")


class NoFiles:
    """An attachments pipeline that must not be asked: reading a voice note is paid for."""

    def __init__(self) -> None:
        self.asked = 0

    async def prepare(self, *args: object) -> None:
        self.asked += 1
        raise AssertionError("a limited guest's file was read")

    def discard(self, *args: object) -> None:
        pass


async def test_a_limited_guests_voice_note_is_not_transcribed(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GUEST_MESSAGES_PER_HOUR="1", **TWO_GUESTS)
    await h.send("what is on today?", GUEST)
    files = NoFiles()
    h.services.chat.answerer.make_files = lambda: files  # type: ignore[assignment,return-value]
    voice = replace(h.message("", GUEST, message_id="v-1"),
                    attachments=(Attachment(kind="voice", mime_type="audio/ogg", ref="f1"),))
    limited = await h.gateway.handle(voice)
    assert limited is not None and limited.route == ROUTE
    assert files.asked == 0 and h.adapter.to(GUEST)[-1] == limited.text

"""Nothing lost, nothing doubled: re-deliveries, restarts, in-flight runs, order per chat."""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter

from tests.support.harness import (
    GUEST,
    OWNER,
    Gate,
    Harness,
    HarnessFactory,
    PurposeModel,
    until,
)


async def test_a_message_delivered_twice_is_answered_once(harness: Harness) -> None:
    message = harness.message("hi there!", message_id="42")
    first = await harness.gateway.handle(message)
    second = await harness.gateway.handle(message)
    assert first is not None and first.route == "quick_reply" and second is None
    assert harness.adapter.sent == [(OWNER, "quick: hi there!")]
    assert harness.small.purposes() == ["classify"]  # one call answers a greeting, once


async def test_a_message_delivered_twice_at_once_is_answered_once(harness: Harness) -> None:
    message = harness.message("hi there!", message_id="43")
    replies = await asyncio.gather(*(harness.gateway.handle(message) for _ in range(5)))
    assert sum(reply is not None for reply in replies) == 1
    assert harness.adapter.sent == [(OWNER, "quick: hi there!")]
    assert len(harness.services.flows.store.runs()) == 1


async def test_a_message_recorded_before_a_crash_is_answered_after_restart(
        make_harness: HarnessFactory) -> None:
    before = await make_harness()
    message = before.message("hi there!", message_id="7")
    # the crash: recorded in the inbox, then the process died before any work on it
    assert before.services.delivery.inbox.record("telegram", OWNER, "7", OWNER, message.to_json())
    after = await make_harness()
    assert after.adapter.sent == [(OWNER, "quick: hi there!")]
    assert after.services.delivery.inbox.status("telegram", OWNER, "7") == "answered"
    again = await make_harness()  # a second restart owes nothing
    assert again.adapter.sent == [] and again.small.history == []


async def test_a_run_in_flight_at_a_crash_is_continued_not_rerun(
        make_harness: HarnessFactory) -> None:
    gate = Gate("CRASH")
    before = await make_harness(big=PurposeModel("big", gate=gate))
    text = "plan the trip to Lisbon CRASH"
    task = asyncio.create_task(before.gateway.handle(before.message(text, message_id="8")))
    await gate.entered.wait()  # full_agent is inside its model call (started early)...
    await until(lambda: before.small.history)  # ...classify has answered...
    task.cancel()  # ...when the process dies
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert before.adapter.sent == []
    assert before.services.delivery.inbox.status("telegram", OWNER, "8") == "received"

    after = await make_harness()
    assert after.adapter.sent == [(OWNER, f"agent: {text}")]
    assert after.small.history == []  # classify_intent had finished: not run again
    assert after.big.purposes() == ["agent"]  # full_agent was in flight: run once more
    [run] = after.services.flows.store.runs()
    assert run.status == "completed"
    story = after.story(run.id)
    ends = Counter(s.removeprefix("node_end:") for s in story if s.startswith("node_end:"))
    assert ends == {"classify_intent": 1, "check_calendar": 1, "gather": 1, "full_agent": 1}
    assert story.count("graph_start") == 2 and story[-1] == "graph_end:completed"
    assert after.services.delivery.inbox.status("telegram", OWNER, "8") == "answered"
    history = after.services.memory.history(f"telegram:chat:{OWNER}")
    assert history == [("user", text), ("assistant", f"agent: {text}")]


async def test_one_chat_in_order_while_other_chats_go_on(make_harness: HarnessFactory) -> None:
    gate = Gate("HOLD")
    h = await make_harness(small=PurposeModel("small", gate=gate))
    first = asyncio.create_task(h.gateway.handle(h.message("hello HOLD")))
    await gate.entered.wait()
    second = asyncio.create_task(h.gateway.handle(h.message("hello again")))
    other = await h.gateway.handle(h.message("hi from bob", GUEST))
    assert other is not None and h.adapter.to(GUEST) == [other.text]  # not held up
    assert not any("hello again" in call.messages[-1].content for call in h.small.history)
    gate.release.set()
    replies = await asyncio.gather(first, second)
    assert [r.text for r in replies if r is not None] == h.adapter.to(OWNER)
    assert h.adapter.to(OWNER)[0].endswith("hello HOLD")
    assert h.adapter.to(OWNER)[1].endswith("hello again")


async def test_many_chats_at_once_each_in_order_none_lost_none_doubled(
        make_harness: HarnessFactory) -> None:
    # the guest writes 40 messages at once: their hourly cap is lifted (tests/chat/
    # test_guest_limits.py is where it is tested)
    harness = await make_harness(FRONTDESK_GUEST_MESSAGES_PER_HOUR="0")
    users = [GUEST, OWNER]
    messages = [harness.message(f"hi number {n}", users[chat % 2], chat=f"chat-{chat}")
                for n in range(4) for chat in range(20)]
    replies = await asyncio.gather(*(harness.gateway.handle(m) for m in messages))
    assert all(reply is not None for reply in replies)
    for chat in range(20):
        answered = [text.split(": ", 1)[1] for text in harness.adapter.to(f"chat-{chat}")]
        assert answered == [f"hi number {n}" for n in range(4)]
    assert len(harness.adapter.sent) == 80


async def test_an_unreadable_record_is_marked_failed_and_recovery_goes_on(
        make_harness: HarnessFactory) -> None:
    before = await make_harness()
    inbox = before.services.delivery.inbox
    bad = {**before.message("x", message_id="8").to_json(), "text": ["a", "list"]}
    assert inbox.record("telegram", OWNER, "8", OWNER, bad)
    assert inbox.record("telegram", OWNER, "9", OWNER,
                         before.message("hi there!", message_id="9").to_json())
    after = await make_harness()  # attach did not raise
    assert after.adapter.sent == [(OWNER, "quick: hi there!")]
    assert after.services.delivery.inbox.status("telegram", OWNER, "8") == "failed"
    [failure] = after.services.delivery.inbox.failures()
    assert (failure.kind, failure.item) == ("message", "8") and "list" in failure.error

"""A lone line is never held; a burst's next line cancels its first turn while that is quiet.

Through the real gateway (``accept`` then ``process``, as the adapters call them), with fake
models whose calls a test holds (``Gate``) to act while a turn runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from typing import Any

from bot.chat.bursts import merged
from bot.chat.senders import history_key, run_id_for
from bot.messages import Reply
from bot.models.base import (
    Message,
    Observer,
    TextSink,
    ToolSpec,
    as_messages,
    emit,
)
from bot.models.base import Reply as ModelReply
from tests.support.harness import Gate, Harness, HarnessFactory, PurposeModel, until


class CountedModel(PurposeModel):
    """A PurposeModel that, like ``bot.models.guarded``, reports a call cancelled in flight
    (a ``model_call`` event marked ``cancelled``, at the cost it held)."""

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Observer | None = None,
                       on_text: TextSink | None = None) -> ModelReply:
        try:
            return await super().complete(messages, tools=tools, max_tokens=max_tokens,
                                          purpose=purpose, observer=observer, on_text=on_text)
        except asyncio.CancelledError:
            emit(observer, {
                "event": "model_call", "role": self.role, "provider": "fake",
                "model": self.name, "purpose": purpose, "input_tokens": 10,
                "output_tokens": max_tokens, "cost_usd": 0.25, "duration_s": 0.0,
                "cancelled": True})
            raise


class HeldAfterATool(PurposeModel):
    """Holds the call that reads a tool's result (the turn has acted) until released."""

    def __init__(self, gate: Gate) -> None:
        super().__init__("big")
        self.held = gate

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]],
                       **options: Any) -> ModelReply:
        if any(message.role == "tool" for message in as_messages(messages)):
            self.held.entered.set()
            await self.held.release.wait()
        return await super().complete(messages, **options)


async def answered(harness: Harness, texts: Sequence[str]) -> list[Reply | None]:
    """Accept and process each text in the background; every reply, once all are done."""
    accepted = [harness.gateway.accept(harness.message(text)) for text in texts]
    return list(await asyncio.gather(*(harness.gateway.process(a) for a in accepted if a)))


async def test_a_lone_line_starts_its_turn_before_the_window_is_over(
        make_harness: HarnessFactory) -> None:
    gate = Gate("hello, a question")
    harness = await make_harness(big=PurposeModel("big", gate=gate),
                                 FRONTDESK_MERGE_WINDOW="5")
    accepted = harness.gateway.accept(harness.message("hello, a question?"))
    assert accepted is not None
    arrived = time.monotonic()
    answering = asyncio.create_task(harness.gateway.process(accepted))
    await asyncio.wait_for(gate.entered.wait(), 30)
    assert time.monotonic() - arrived < 5  # its model was asked inside the window: not held
    gate.release.set()
    reply = await answering
    assert reply is not None and harness.adapter.to("100") == ["agent: hello, a question?"]
    run = harness.services.flows.store.run(reply.run_id or "")
    assert run is not None and run.status == "completed"


async def test_a_second_line_in_the_window_cancels_the_quiet_turn_and_one_reply_answers_both(
        make_harness: HarnessFactory) -> None:
    gate = Gate("first question")
    harness = await make_harness(small=CountedModel("small", gate=gate),
                                 FRONTDESK_MERGE_WINDOW="5")  # classify is held
    first = harness.message("first question?")
    accepted = harness.gateway.accept(first)
    assert accepted is not None
    answering = asyncio.create_task(harness.gateway.process(accepted))
    await asyncio.wait_for(gate.entered.wait(), 30)  # the turn runs, shows nothing yet
    second = harness.message("and a second line")
    more = harness.gateway.accept(second)
    assert more is not None
    gate.release.set()  # the cancelled call was told first: it is not answered
    replies = await asyncio.gather(answering, harness.gateway.process(more))
    [reply] = [r for r in replies if r is not None]
    assert harness.adapter.to("100") == ["agent: first question?\nand a second line"]
    assert reply.run_id == run_id_for(merged([first, second]))
    store = harness.services.flows.store
    cancelled = store.run(run_id_for(first))
    assert cancelled is not None and cancelled.status == "cancelled"
    events = store.events(cancelled.id)
    assert events[-1]["event"] == "graph_end" and events[-1]["by"] == "merged"
    assert [e["cost_usd"] for e in events if e["event"] == "model_call"
            and e.get("cancelled")] == [0.25]  # the held call, at what it held
    rows = harness.services.delivery.inbox.conn.execute(
        "SELECT status, run_id FROM inbox ORDER BY rowid").fetchall()
    assert rows == [("answered", reply.run_id)] * 2
    assert harness.services.memory.history(history_key(first), 10) == [
        ("user", "first question?"), ("user", "and a second line"),
        ("assistant", "agent: first question?\nand a second line")]  # line one once


async def test_a_line_after_the_turn_ran_a_tool_joins_the_next_turn(
        make_harness: HarnessFactory) -> None:
    gate = Gate("")
    big = HeldAfterATool(gate)
    big.enqueue(tool_calls=[("remember", {"text": "the plumber comes Tuesday"})])
    harness = await make_harness(big=big, FRONTDESK_MERGE_WINDOW="2")
    first = harness.gateway.accept(harness.message("remember the plumber, please"))
    assert first is not None
    arrived = time.monotonic()
    running = asyncio.create_task(harness.gateway.process(first))
    await asyncio.wait_for(gate.entered.wait(), 30)  # the tool ran: the turn has acted
    later = [harness.gateway.accept(harness.message(text)) for text in ("and also", "this?")]
    assert time.monotonic() - arrived < 2  # inside the window: the tool is what kept it
    waiting = [asyncio.create_task(harness.gateway.process(a)) for a in later if a]
    assert harness.adapter.to("100") == []
    gate.release.set()
    replies = await asyncio.gather(running, *waiting)
    assert harness.adapter.to("100") == ["agent: remember the plumber, please",
                                         "agent: and also\nthis?"]
    assert len([r for r in replies if r is not None]) == 2
    assert len(big.history) == 3  # the tool turn, its answer, the next turn: none cancelled
    assert all(run.status == "completed" for run in harness.services.flows.store.runs(limit=10))


async def test_ten_lines_are_one_reply_and_at_most_one_cancelled_turn(
        make_harness: HarnessFactory) -> None:
    gate = Gate("line 0")
    harness = await make_harness(big=PurposeModel("big", gate=gate),
                                 FRONTDESK_MERGE_WINDOW="0.5")
    lines = [f"line {n} of a long thought" for n in range(10)]
    first = harness.gateway.accept(harness.message(lines[0]))
    assert first is not None
    processes = [asyncio.create_task(harness.gateway.process(first))]
    await asyncio.wait_for(gate.entered.wait(), 30)
    gate.release.set()
    processes += [asyncio.create_task(harness.gateway.process(a)) for a in
                  [harness.gateway.accept(harness.message(text)) for text in lines[1:]] if a]
    replies = await asyncio.gather(*processes)
    assert len([r for r in replies if r is not None]) == 1
    assert harness.adapter.to("100") == ["agent: " + "\n".join(lines)]
    runs = harness.services.flows.store.runs(limit=10)
    assert sorted(run.status for run in runs) == ["cancelled", "completed"]


async def test_stopped_after_a_cancel_the_burst_is_answered_once_with_a_fresh_run(
        make_harness: HarnessFactory) -> None:
    gate = Gate("first question")
    harness = await make_harness(small=PurposeModel("small", gate=gate),
                                 FRONTDESK_MERGE_WINDOW="5")
    first = harness.message("first question?")
    accepted = harness.gateway.accept(first)
    assert accepted is not None
    answering = asyncio.create_task(harness.gateway.process(accepted))
    await asyncio.wait_for(gate.entered.wait(), 30)
    second = harness.message("and a second line")
    more = harness.gateway.accept(second)
    assert more is not None
    waiting = asyncio.create_task(harness.gateway.process(more))
    store = harness.services.flows.store
    await until(lambda: (run := store.run(run_id_for(first))) and run.status == "cancelled")
    for process in (answering, waiting):  # stopped while the burst waits for its pause
        process.cancel()
    await asyncio.gather(answering, waiting, return_exceptions=True)
    assert harness.adapter.to("100") == []

    gate.release.set()
    again = await make_harness(small=PurposeModel("small", gate=gate),
                               FRONTDESK_MERGE_WINDOW="5")  # the next start, same home
    await until(lambda: again.adapter.to("100"))
    assert again.adapter.to("100") == ["agent: first question?\nand a second line"]
    runs = {run.id: run.status for run in again.services.flows.store.runs(limit=10)}
    assert runs == {run_id_for(first): "cancelled",
                    run_id_for(merged([first, second])): "completed"}
    assert [role for role, _ in again.services.memory.history(history_key(first), 10)] == \
        ["user", "user", "assistant"]  # line one once

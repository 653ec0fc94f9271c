"""A restart with a backlog: chats recover at once, each in order, new messages wait only for
their own chat."""

from __future__ import annotations

import asyncio

from tests.support.harness import Gate, HarnessFactory, PurposeModel, RecordingAdapter, until


async def test_backlogs_recover_per_chat_in_parallel_and_new_chats_need_not_wait(
        make_harness: HarnessFactory) -> None:
    gate = Gate("slow")  # chat 100's first backlog message hangs until released
    desk = await make_harness(big=PurposeModel("big", gate=gate), attach=False)
    backlog = [desk.message("slow: what is the plan?", "100", message_id="a1"),
               desk.message("and after that?", "100", message_id="a2"),
               desk.message("what is the weather?", "200", message_id="b1")]
    for msg in backlog:  # received before the crash, never answered
        assert desk.gateway.accept(msg) is not None
    adapter = RecordingAdapter()
    await asyncio.wait_for(desk.gateway.attach(adapter, background=True), 10)  # returns at once
    await asyncio.wait_for(gate.entered.wait(), 10)
    await until(lambda: adapter.to("200"))  # chat 200's backlog does not wait behind 100's
    assert adapter.to("200") == ["agent: what is the weather?"] and adapter.to("100") == []
    new = desk.message("hello?", "200", message_id="b2")  # a chat without a backlog: no wait
    assert (await asyncio.wait_for(desk.gateway.handle(new), 10)) is not None
    later = asyncio.create_task(desk.gateway.handle(
        desk.message("one more thing: book the van", "100", message_id="a3")))
    gate.release.set()
    await asyncio.wait_for(later, 10)
    assert adapter.to("100") == ["agent: slow: what is the plan?", "agent: and after that?",
                                 "agent: one more thing: book the van"]  # the backlog first

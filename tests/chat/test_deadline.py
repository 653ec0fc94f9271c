"""A message's deadline (FRONTDESK_ANSWER_DEADLINE): a hung model never holds a chat."""

from __future__ import annotations

import asyncio
import contextlib

from tests.support.harness import Gate, HarnessFactory, PurposeModel


async def test_a_hung_model_is_stopped_at_the_deadline_and_the_chat_is_free(
        make_harness: HarnessFactory) -> None:
    gate = Gate("stuck")  # never released: the big model hangs on this message
    desk = await make_harness(big=PurposeModel("big", gate=gate),
                              FRONTDESK_ANSWER_DEADLINE="0.3")
    stuck = await desk.send("please look into the stuck invoice")
    assert stuck.route == "failed"
    assert stuck.text == "This took too long, so I stopped; please try again."
    assert desk.adapter.to("100")[-1] == stuck.text  # the sender sees it
    run = desk.services.flows.store.run(stuck.run_id or "")
    assert run is not None and (run.status, run.error) == ("failed", "deadline")
    end = desk.services.flows.store.events(run.id)[-1]
    assert (end["event"], end["status"], end["error"]) == ("graph_end", "failed", "deadline")
    after = await desk.send("what is on today?")  # the chat's lock was given back
    assert after.route == "full_agent" and after.text.startswith("agent:")
    assert await desk.services.flows.runs.recover() == []  # nothing left running to take up again


async def test_a_clean_stop_mid_answer_does_not_count_as_a_try(
        make_harness: HarnessFactory) -> None:
    gate = Gate("halfway")  # the big model waits here until the answer is cancelled
    desk = await make_harness(big=PurposeModel("big", gate=gate))
    msg = desk.message("please look into this halfway done task")
    answering = asyncio.create_task(desk.gateway.handle(msg))
    await asyncio.wait_for(gate.entered.wait(), 10)
    answering.cancel()  # what a SIGTERM's stop does to the work under way
    with contextlib.suppress(asyncio.CancelledError):
        await answering
    inbox = desk.services.delivery.inbox
    assert inbox.status(msg.platform, msg.chat_id, msg.message_id) == "received"
    # the interrupted try was given back: the next try is the first (a crash's would count)
    assert desk.services.delivery.inbox.take_up(msg.platform, msg.chat_id, msg.message_id) == 1

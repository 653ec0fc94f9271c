"""The speculative first turn adds no serial work to the reply's path: classify asks only once
the turn's request has left, and an answer that comes whole with the turn's end is not shown as
a draft first (the reply follows at once); text that streams while the turn runs still is."""

from __future__ import annotations

import asyncio
from typing import Any

from graphs import run_graph
from tests.fakes.model import FakeModel
from tests.graphs.workflows.test_speculation import OWNER, classified, triage


class SlowToSend(FakeModel):
    """A big model whose request leaves only after a few turns of the event loop (as an SDK's
    does: it builds the request, takes a connection, writes), saying so when it has."""

    def __init__(self, asked: list[str]) -> None:
        super().__init__(role="big")
        self.asked = asked

    async def complete(self, messages: Any, **options: Any) -> Any:
        self.asked.append("big:asked")
        for _ in range(5):
            await asyncio.sleep(0)  # the SDK's own awaits before the bytes are out
        self.asked.append("big:sent")
        return await super().complete(messages, **options)  # which says it has left


class Asked(FakeModel):
    """A small model noting when it is asked."""

    def __init__(self, asked: list[str]) -> None:
        super().__init__(role="small")
        self.asked = asked

    async def complete(self, messages: Any, **options: Any) -> Any:
        self.asked.append(f"small:{options.get('purpose')}")
        return await super().complete(messages, **options)


class WholeAnswer(FakeModel):
    """A big model whose streamed answer arrives in one piece with the end of its turn (a
    provider's short answer, read from one buffer)."""

    async def complete(self, messages: Any, *, on_text: Any = None, **options: Any) -> Any:
        reply = await super().complete(messages, **options)
        if on_text is not None and not reply.tool_calls:
            on_text(reply.text)
        return reply


async def test_classify_asks_only_once_the_speculative_request_has_left() -> None:
    asked: list[str] = []
    small, big = Asked(asked), SlowToSend(asked)
    small.enqueue(classified("question"), delay_s=0.05)
    big.enqueue("Friday.", delay_s=0.1)
    state = await run_graph(triage(small, big, rules=("question", 0.2)),
                            {"text": "when is the dentist?", "sender": OWNER, "history": []},
                            observer=lambda event: None)
    assert state["reply"] == "Friday."
    assert asked == ["big:asked", "big:sent", "small:classify"]


async def shown_while_running(big: FakeModel) -> tuple[Any, list[str]]:
    """Run a question whose speculative turn is adopted; the texts the live sink was given."""
    shown: list[str] = []
    small = FakeModel(role="small")
    small.enqueue(classified("question"), delay_s=0.05)
    state = await run_graph(triage(small, big, rules=("question", 0.2)),
                            {"text": "when is the dentist?", "sender": OWNER, "history": []},
                            observer=lambda event: None, live=shown.append)
    await asyncio.sleep(0)  # anything passed on late would arrive now
    return state, shown


async def test_an_answer_that_comes_whole_with_the_turns_end_is_not_shown_before_the_reply(
) -> None:
    big = WholeAnswer(role="big")
    big.enqueue("The dentist is on Friday at nine.", delay_s=0.15)
    state, shown = await shown_while_running(big)
    assert (state["route"], state["reply"]) == ("full_agent", "The dentist is on Friday at nine.")
    assert [text for text in shown if text] == []


async def test_an_answer_that_streams_while_the_turn_runs_is_shown_as_it_comes() -> None:
    big = FakeModel(role="big")
    big.chunk_delay_s = 0.01
    big.enqueue("The dentist is on Friday at nine.", delay_s=0.15)
    state, shown = await shown_while_running(big)
    assert state["reply"] == "The dentist is on Friday at nine."
    assert shown and shown[0] == "The"  # from the first word on, after the adoption
    assert "The dentist is on Friday at" in shown


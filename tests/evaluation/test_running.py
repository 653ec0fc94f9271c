"""Running a set: triage's own classify step and route for each message, a few at a time,
the model's calls tallied from its events; and the estimate made before a paid run."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from typing import Any

from bot.evaluation.labelled import Labelled
from bot.evaluation.running import Classifier, Outcome, estimate_usd, run_all
from bot.models import classify_offline
from bot.models.base import Observer, Reply, Usage, as_messages, emit
from bot.models.costs import Price, PriceTable
from graphs.workflows.triage import CLASSIFY_MAX_TOKENS

PROMPT = "Sort this message."


class HeldModel:
    """A small model answering each text from ``answers``, every call held until ``go`` is
    set; it keeps how many calls were in flight at most, and what it was asked."""

    provider = "openai"
    name = "gpt-4.1-mini"

    def __init__(self, answers: Mapping[str, str]) -> None:
        self.answers = answers
        self.in_flight = 0
        self.most = 0
        self.asked: list[tuple[str, str, int, str | None]] = []  # system, user, max, purpose
        self.go = asyncio.Event()
        self.changed = asyncio.Event()

    async def complete(self, messages: Sequence[Mapping[str, Any]], *, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Observer | None = None,
                       **_: Any) -> Reply:
        system, user = as_messages(messages)
        self.asked.append((system.content, user.content, max_tokens, purpose))
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        self.changed.set()
        await self.go.wait()
        self.in_flight -= 1
        emit(observer, {"event": "model_call", "provider": self.provider, "model": self.name,
                        "input_tokens": 50, "output_tokens": 7, "cost_usd": 0.25})
        return Reply(text=self.answers[user.content], tool_calls=[], usage=Usage(50, 7),
                     model=self.name,
                     provider=self.provider, cost_usd=0.25)

    async def wait_in_flight(self, count: int) -> None:
        async with asyncio.timeout(5):
            while self.in_flight < count:
                self.changed.clear()
                await self.changed.wait()


def intent(name: str, urgency: float = 0.0) -> str:
    return json.dumps({"intent": name, "urgency": urgency, "reply": ""})


async def test_at_most_four_messages_are_asked_at_once_and_each_is_routed_as_triage_does(
        ) -> None:
    texts = [f"question {n}" for n in range(8)] + ["the server is on fire", "mine is too",
                                                     "hello!", "what is on the agenda tomorrow?"]
    answers = {text: intent("question") for text in texts[:8]}
    answers |= {"the server is on fire": intent("urgent", 1.0),
                "mine is too": intent("task", 0.9),  # urgency alone makes it urgent
                "hello!": intent("social"),
                "what is on the agenda tomorrow?": "sure! here you go"}  # not JSON: the rules
    items = [Labelled(n + 1, text, "full_agent", "owner" if text == "mine is too" else "guest")
             for n, text in enumerate(texts)]
    model = HeldModel(answers)
    outcomes: list[Outcome] = []
    seen: list[Outcome] = []
    running = asyncio.create_task(run_all(items, Classifier(model, PROMPT, classify_offline,
                                                            "fake"), outcomes,
                                          on_done=seen.append))
    await model.wait_in_flight(4)
    for _ in range(50):  # every other message gets its chance to start: none may
        await asyncio.sleep(0)
    assert (model.in_flight, outcomes) == (4, [])
    model.go.set()
    done = await running
    assert model.most == 4 and len(model.asked) == 12
    assert {(system, limit, purpose) for system, _, limit, purpose in model.asked} == {
        (PROMPT, CLASSIFY_MAX_TOKENS, "classify")}
    assert seen == outcomes and [o.item.line for o in done] == list(range(1, 13))
    got = {o.item.text: (o.got, o.classified_by) for o in done}
    assert got["question 3"] == ("full_agent", "model")
    assert got["the server is on fire"] == ("notify_now", "model")  # someone else's
    assert got["mine is too"] == ("full_agent", "model")  # the owner's own urgent matter
    assert got["hello!"] == ("quick_reply", "model")
    assert got["what is on the agenda tomorrow?"] == ("full_agent", "rules")
    assert all((o.tally.calls, o.tally.input_tokens, o.tally.cost_usd) == (1, 50, 0.25)
               for o in done)


async def test_the_offline_model_standing_in_is_not_a_call() -> None:
    class Offline(HeldModel):
        provider = "offline"

    model = Offline({"hi there": intent("social")})
    model.go.set()
    [done] = await run_all([Labelled(1, "hi there", "quick_reply")],
                           Classifier(model, PROMPT, classify_offline, "offline"), [])
    assert (done.got, done.tally.calls, done.tally.cost_usd) == ("quick_reply", 0, 0.0)


def test_the_estimate_counts_prompt_and_text_bytes_and_each_reply_at_its_cap() -> None:
    prices = PriceTable({"gpt-4.1-mini": Price(0.40, 1.60)})
    items = [Labelled(1, "x" * 400, "full_agent"), Labelled(2, "héllo", "quick_reply")]
    prompt = "p" * 800
    input_tokens = [(800 + 400) // 4 + 32, (800 + 6) // 4 + 32]  # framing: 2 messages, 1 request
    expected = sum((tokens * 0.40 + CLASSIFY_MAX_TOKENS * 1.60) / 1e6 for tokens in input_tokens)
    assert estimate_usd(items, prompt, "gpt-4.1-mini", prices) == expected
    assert estimate_usd(items, prompt, "llama3.2", prices) == 0.0  # a local model is free

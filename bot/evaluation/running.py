"""Running an evaluation: each labelled message through triage's classify step and its route.

``run_all`` asks exactly what triage asks for a message (``graphs.workflows.triage``'s
``classify_and_route``: the small model with the classify prompt, the offline rules when its
reply cannot be read, then the route from intent, urgency and sender) and nothing after it:
no reply, no memory, no tool, no run. A few messages are in flight at a time; each outcome is
appended as it comes, so what was measured before a Ctrl-C is still there.
``estimate_usd`` is what a paid run would cost at most, before any call is made.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.evaluation.labelled import Labelled
from bot.models.costs import PriceTable
from bot.models.guarded import PER_MESSAGE_TOKENS, PER_REQUEST_TOKENS
from graphs.protocols import ChatModel
from graphs.workflows.triage import CLASSIFY_MAX_TOKENS, classify_and_route

IN_FLIGHT = 4  # messages asked at once: a few, so a provider's rate limit is not the measure
BYTES_PER_TOKEN = 4  # a typical tokenizer's average on text (the estimate, not the bound)


@dataclass(frozen=True)
class Classifier:
    """What decides a route: triage's small model and classify prompt, and the offline rules."""

    small: ChatModel
    prompt: str
    fallback: Callable[[str], tuple[str, float]]
    label: str  # how the figures name it: "openai/gpt-4.1-mini", "the offline router"


@dataclass
class CallTally:
    """The model calls one message made, from its ``model_call`` events. A call counts when it
    was put to a provider (not one the daily budget refused, nor the offline model's answer);
    ``stood_in`` notes that the offline model answered for the provider (refused by the
    budget, or the provider down), so the offline rules decided, not the model."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    stood_in: bool = False

    def observe(self, event: dict[str, Any]) -> None:
        if event.get("event") != "model_call":
            return
        if event.get("fallback_from"):
            self.stood_in = True
        if event.get("provider") == "offline" or event.get("refused"):
            return
        self.calls += 1
        self.input_tokens += int(event.get("input_tokens") or 0)
        self.output_tokens += int(event.get("output_tokens") or 0)
        self.cost_usd += float(event.get("cost_usd") or 0.0)


@dataclass(frozen=True)
class Outcome:
    """One message measured: the route it got, who decided, how long, what it cost."""

    item: Labelled
    got: str
    classified_by: str  # "model", or "rules": the model's reply unreadable, or none came
    took_s: float
    tally: CallTally = field(default_factory=CallTally)

    @property
    def right(self) -> bool:
        return self.got == self.item.route


async def run_all(items: Sequence[Labelled], classifier: Classifier, outcomes: list[Outcome],
                  *, in_flight: int = IN_FLIGHT,
                  on_done: Callable[[Outcome], None] | None = None,
                  clock: Callable[[], float] = time.perf_counter) -> list[Outcome]:
    """Route every message, ``in_flight`` at a time, appending each outcome to ``outcomes``
    as it comes (``on_done`` is told too); the outcomes, in the set's order."""
    gate = asyncio.Semaphore(in_flight)

    async def one(item: Labelled) -> None:
        async with gate:
            tally = CallTally()
            started = clock()
            decided = await classify_and_route(classifier.small, classifier.prompt,
                                               classifier.fallback, item.text, item.is_owner,
                                               tally.observe)
            took = clock() - started
        decider = "rules" if tally.stood_in else str(decided["classified_by"])
        outcome = Outcome(item, str(decided["route"]), decider, took, tally)
        outcomes.append(outcome)
        if on_done is not None:
            on_done(outcome)

    await asyncio.gather(*(one(item) for item in items))
    return sorted(outcomes, key=lambda outcome: outcome.item.line)


def estimate_usd(items: Sequence[Labelled], prompt: str, model: str,
                 prices: PriceTable) -> float:
    """What classifying ``items`` with ``model`` should cost at most: the prompt and each
    text at about four bytes a token with the request's framing, and each reply at its cap
    (``CLASSIFY_MAX_TOKENS``). An unpriced model (a local server) costs nothing."""
    prompt_bytes = len(prompt.encode("utf-8"))
    total = 0.0
    for item in items:
        text_bytes = len(item.text.encode("utf-8"))
        input_tokens = ((prompt_bytes + text_bytes) // BYTES_PER_TOKEN
                        + 2 * PER_MESSAGE_TOKENS + PER_REQUEST_TOKENS)
        total += prices.cost(model, input_tokens, CLASSIFY_MAX_TOKENS)
    return total

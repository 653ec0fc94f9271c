"""A provider wrapped for production: budget holds, time-outs, retries, offline fallback, costs.

``GuardedModel`` is what ``build_models`` hands out for the anthropic and openai providers.
The provider client makes one request; this class decides everything around it. Each attempt
first reserves its worst case in the spend log (``bot.models.costs``): input tokens bounded from
the request's bytes, plus ``max_tokens``, at the configured prices. A reservation that does not
fit the daily budget refuses the call: the offline assistant answers, says why, and the reply
carries ``refused`` so a workflow stops instead of keeping it.

A call cancelled while the provider works on it (a speculative turn triage no longer needs,
``graphs.workflows.speculation``) is counted at its worst case: the provider's bill for a
request it already received cannot be read back (a request without streaming reports its usage
only with the answer), so the hold becomes a settled call of exactly the amount it held, and
the ``model_call`` event says ``cancelled`` with those token bounds (at most, never less).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from bot.models.base import (
    Message,
    ModelError,
    Observer,
    Reply,
    Stopwatch,
    TextFeed,
    TextSink,
    ToolSpec,
    as_messages,
    emit,
)
from bot.models.costs import OverBudget, PriceTable, SpendLog
from bot.models.offline import OfflineModel
from bot.models.retry import MODEL_RETRY, ProviderFailure, Sleep, call_with_retry
from bot.models.vision import (
    IMAGE_TOKENS,
    NO_VISION,
    has_images,
    refused_images,
    without_images,
)
from graphs.graph import RetryPolicy

# Replies to these purposes are parsed as JSON: a fallback note must not be prepended to them.
STRUCTURED_PURPOSES = frozenset({"classify", "check_tone"})
# A token is at least one byte of text; these cover the framing a provider adds around it
# (role markers per message, the request itself, the tool-use instructions it injects).
PER_MESSAGE_TOKENS = 8
PER_REQUEST_TOKENS = 16
TOOL_USE_TOKENS = 1024
# The whole request's bound is the SDK's time-out plus this: the SDK's own (per read) fires
# first and leaves its connection pool clean, this one only stops a reply that trickles in.
BACKSTOP_S = 1.0


def input_token_bound(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> int:
    """At most this many input tokens for the request: its bytes plus the framing."""
    total = PER_REQUEST_TOKENS
    for message in messages:
        total += PER_MESSAGE_TOKENS + len(message.content.encode("utf-8"))
        total += IMAGE_TOKENS * len(message.images)
        total += sum(len(json.dumps([c.id, c.name, c.arguments]).encode("utf-8"))
                     for c in message.tool_calls) + len((message.tool_call_id or "").encode())
    if tools:
        total += TOOL_USE_TOKENS + sum(
            len(json.dumps([t.name, t.description, t.parameters]).encode("utf-8"))
            for t in tools)
    return total


def usd(amount: float) -> str:
    """Dollars as the owner reads them: cents, or four places below a cent."""
    return f"${amount:.2f}" if amount >= 0.01 or amount == 0 else f"${amount:.4f}"


def refusal_sentence(over: OverBudget) -> str:
    """Why a call was refused, in one sentence."""
    return (f"Today's model budget of {usd(over.budget_usd)} is used up "
            f"({usd(over.committed_usd)} spent or in progress; this call could cost up to "
            f"{usd(over.worst_usd)}), so model answers resume tomorrow.")


class ProviderClient(Protocol):
    """One request to one model, no retries: ``AnthropicClient`` and ``OpenAIClient``."""

    provider: str
    name: str
    label: str  # the provider as messages name it, e.g. "OpenAI-compatible"
    timeout: float  # seconds one request may take

    async def request(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                      max_tokens: int, feed: TextFeed | None = None) -> Reply: ...

    async def aclose(self) -> None: ...


class GuardedModel:
    """A ``Model``: the client's call with the budget, retry, fallback and cost rules around it."""

    def __init__(self, client: ProviderClient, *, role: str, prices: PriceTable,
                 spend_log: SpendLog | None = None, budget_usd: float | None = None,
                 policy: RetryPolicy | None = None, sleep: Sleep = asyncio.sleep,
                 down_for_s: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.provider = client.provider
        self.name = client.name
        self.role = role
        self.client = client
        self._prices = prices
        self._spend_log = spend_log
        self._budget = budget_usd
        self._policy = policy or MODEL_RETRY
        self._sleep = sleep
        self._down_for = down_for_s
        self._clock = clock
        self._down_until = 0.0
        self._down_reason = ""
        self._offline = OfflineModel(role=role)
        self._no_images = False  # set once the provider refused a request's images

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None,
                       on_text: TextSink | None = None) -> Reply:
        """Ask the provider; offline answers if the budget refuses or the provider stays down;
        a permanent failure raises ModelError. Images go along until the provider refuses
        them (``bot.models.vision``); from then on the text goes alone, and the reply says so.
        With ``on_text`` the provider streams (see ``Model.complete``); each attempt starts
        the shown text over, so a retry never shows an answer twice.
        """
        conversation = as_messages(messages)
        if not has_images(conversation):
            return await self._ask(conversation, tools, max_tokens, purpose, observer, on_text)
        if not self._no_images:
            try:
                return await self._ask(conversation, tools, max_tokens, purpose, observer,
                                       on_text)
            except ModelError as failure:
                if not refused_images(failure):
                    raise
                self._no_images = True  # learned from the provider's answer
        reply = await self._ask(without_images(conversation), tools, max_tokens, purpose,
                                observer, on_text)
        if not reply.tool_calls and purpose not in STRUCTURED_PURPOSES:
            reply.text = f"{NO_VISION}\n\n{reply.text}"
        return reply

    async def _ask(self, conversation: list[Message], tools: Sequence[ToolSpec] | None,
                   max_tokens: int, purpose: str | None, observer: Observer | None,
                   on_text: TextSink | None = None) -> Reply:
        """One model call with the budget, retry and fallback rules around it."""
        sink = observer
        feed = TextFeed(on_text, sink, role=self.role, purpose=purpose) if on_text else None
        event = {"event": "model_call", "role": self.role, "provider": self.provider,
                 "model": self.name, "purpose": purpose}
        if self._clock() < self._down_until:  # still marked down: don't wait on it again
            return await self._fallback(conversation, tools, max_tokens, purpose, sink,
                                        self._down_reason)
        bound = input_token_bound(conversation, tools)
        watch = Stopwatch()
        counted: list[float] = []  # what a cancelled attempt was counted at
        try:
            reply = await call_with_retry(
                lambda: self._attempt(conversation, tools, max_tokens, purpose, bound, counted,
                                      feed),
                self._policy, sleep=self._sleep)
        except asyncio.CancelledError:
            tokens = (bound, max_tokens) if counted else (0, 0)
            emit(sink, {**event, "input_tokens": tokens[0], "output_tokens": tokens[1],
                        "cost_usd": sum(counted), "duration_s": watch.elapsed(),
                        "cancelled": True})
            raise
        except OverBudget as over:
            if feed is not None:
                feed.restart()
            reason = refusal_sentence(over)
            emit(sink, {**event, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                        "duration_s": watch.elapsed(), "error": reason, "refused": True})
            reply = await self._fallback(conversation, tools, max_tokens, purpose, sink, reason)
            reply.refused = reason
            return reply
        except ProviderFailure as failure:
            if feed is not None:
                feed.restart()  # the offline answer, or the failure, is what counts now
            emit(sink, {**event, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                        "duration_s": watch.elapsed(), "error": failure.user_message})
            if failure.transient:
                self._down_until = self._clock() + self._down_for
                self._down_reason = failure.user_message
                return await self._fallback(conversation, tools, max_tokens, purpose, sink,
                                            failure.user_message)
            raise ModelError(failure.user_message, transient=False,
                             status=failure.status) from None
        emit(sink, {**event, "model": reply.model, "input_tokens": reply.usage.input_tokens,
                    "output_tokens": reply.usage.output_tokens, "cost_usd": reply.cost_usd,
                    "duration_s": watch.elapsed()})
        return reply

    async def _attempt(self, conversation: list[Message], tools: Sequence[ToolSpec] | None,
                       max_tokens: int, purpose: str | None, input_bound: int,
                       counted: list[float], feed: TextFeed | None = None) -> Reply:
        """One request: hold its worst case, bound its time, settle to its real cost (its
        worst case when cancelled in flight, appended to ``counted``)."""
        if feed is not None:
            feed.restart()  # a retry: what an earlier attempt showed is taken back
        hold = None
        worst = self._prices.cost(self.name, input_bound, max_tokens)
        if self._spend_log is not None:
            hold = self._spend_log.reserve(usd=worst, budget_usd=self._budget,
                                        provider=self.provider, model=self.name,
                                        role=self.role, purpose=purpose)
        try:
            async with asyncio.timeout(self.client.timeout + BACKSTOP_S):
                reply = await self.client.request(conversation, tools, max_tokens, feed)
        except TimeoutError:
            # the SDK's time-out (per read) fires first; this one bounds a trickling reply
            raise ProviderFailure(f"The {self.client.label} API timed out.", transient=True,
                                  timed_out=True) from None
        except ProviderFailure as failure:
            if hold is not None and self._spend_log is not None and not failure.maybe_billed:
                self._spend_log.release(hold)  # answered with an error, or never reached: free
            raise
        except asyncio.CancelledError:
            counted.append(worst)  # what it may have cost: the hold becomes that call
            if hold is not None and self._spend_log is not None:
                self._spend_log.settle(hold, provider=self.provider, model=self.name,
                                       role=self.role, purpose=purpose,
                                       input_tokens=input_bound, output_tokens=max_tokens,
                                       cost_usd=worst)
            raise
        reply.cost_usd = self._prices.cost(reply.model, reply.usage.input_tokens,
                                           reply.usage.output_tokens)
        if hold is not None and self._spend_log is not None:
            self._spend_log.settle(hold, provider=self.provider, model=reply.model, role=self.role,
                                purpose=purpose, input_tokens=reply.usage.input_tokens,
                                output_tokens=reply.usage.output_tokens,
                                cost_usd=reply.cost_usd)
        return reply

    async def _fallback(self, conversation: list[Message], tools: Sequence[ToolSpec] | None,
                        max_tokens: int, purpose: str | None, sink: Observer | None,
                        reason: str) -> Reply:
        """The offline provider answers, and says why."""
        def tagged(event: dict[str, Any]) -> None:
            if sink is not None:
                sink({**event, "fallback_from": self.provider})

        reply = await self._offline.complete(conversation, tools=tools, max_tokens=max_tokens,
                                             purpose=purpose, observer=tagged)
        if not reply.tool_calls and purpose not in STRUCTURED_PURPOSES:
            reply.text = f"{reason} The offline assistant answered instead:\n{reply.text}"
        return reply

    async def aclose(self) -> None:
        """Close the provider's HTTP connections."""
        await self.client.aclose()

"""A provider wrapped for production: budget check, retries, offline fallback, cost and events.

``GuardedModel`` is what ``build_models`` hands out for the anthropic and openai providers.
The provider client makes one request; this class decides everything around it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol

from bot.costs import CostLedger, PriceTable
from bot.models.base import (
    BudgetExceeded,
    Message,
    ModelError,
    Observer,
    Reply,
    Stopwatch,
    ToolSpec,
    as_messages,
    emit,
    resolve_observer,
)
from bot.models.offline import OfflineModel
from bot.models.retry import MODEL_RETRY, ProviderFailure, Sleep, call_with_retry
from graphs.graph import RetryPolicy

# Replies to these purposes are parsed as JSON: a fallback note must not be prepended to them.
STRUCTURED_PURPOSES = frozenset({"classify", "check_tone"})


class ProviderClient(Protocol):
    """One request to one model, no retries: ``AnthropicClient`` and ``OpenAIClient``."""

    provider: str
    name: str

    async def request(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                      max_tokens: int) -> Reply: ...

    async def aclose(self) -> None: ...


class GuardedModel:
    """A ``Model``: the client's call with the budget, retry, fallback and cost rules around it."""

    def __init__(self, client: ProviderClient, *, role: str, prices: PriceTable,
                 ledger: CostLedger | None = None, budget_usd: float | None = None,
                 policy: RetryPolicy | None = None, sleep: Sleep = asyncio.sleep,
                 down_for_s: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.provider = client.provider
        self.name = client.name
        self.role = role
        self.client = client
        self._prices = prices
        self._ledger = ledger
        self._budget = budget_usd
        self._policy = policy or MODEL_RETRY
        self._sleep = sleep
        self._down_for = down_for_s
        self._clock = clock
        self._down_until = 0.0
        self._down_reason = ""
        self._offline = OfflineModel(role=role)

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None) -> Reply:
        """Ask the provider; fall back to offline if it stays down; raise ModelError otherwise."""
        conversation = as_messages(messages)
        sink = resolve_observer(observer)
        event = {"event": "model_call", "role": self.role, "provider": self.provider,
                 "model": self.name, "purpose": purpose}
        self._check_budget(sink, event)
        if self._clock() < self._down_until:  # still marked down: don't wait on it again
            return await self._fallback(conversation, tools, max_tokens, purpose, sink,
                                        self._down_reason)
        watch = Stopwatch()
        try:
            reply = await call_with_retry(
                lambda: self.client.request(conversation, tools, max_tokens), self._policy,
                sleep=self._sleep)
        except ProviderFailure as failure:
            emit(sink, {**event, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                        "duration_s": watch.elapsed(), "error": failure.user_message})
            if failure.transient:
                self._down_until = self._clock() + self._down_for
                self._down_reason = failure.user_message
                return await self._fallback(conversation, tools, max_tokens, purpose, sink,
                                            failure.user_message)
            raise ModelError(failure.user_message, transient=False,
                             status=failure.status) from None
        reply.cost_usd = self._prices.cost(reply.model, reply.usage.input_tokens,
                                           reply.usage.output_tokens)
        if self._ledger is not None:
            self._ledger.record(provider=self.provider, model=reply.model, role=self.role,
                                purpose=purpose, input_tokens=reply.usage.input_tokens,
                                output_tokens=reply.usage.output_tokens,
                                cost_usd=reply.cost_usd)
        emit(sink, {**event, "model": reply.model, "input_tokens": reply.usage.input_tokens,
                    "output_tokens": reply.usage.output_tokens, "cost_usd": reply.cost_usd,
                    "duration_s": watch.elapsed()})
        return reply

    def _check_budget(self, sink: Observer | None, event: dict[str, Any]) -> None:
        """Past the daily budget, refuse big-model calls (small ones stay cheap and allowed)."""
        if self.role != "big" or self._budget is None or self._ledger is None:
            return
        spent = self._ledger.spent()
        if spent < self._budget:
            return
        message = (f"Today's model budget of ${self._budget:.2f} is spent "
                   f"(${spent:.2f}); big-model answers resume tomorrow.")
        emit(sink, {**event, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0,
                    "duration_s": 0.0, "error": message})
        raise BudgetExceeded(message)

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

"""FakeModel: the ``bot.models.Model`` interface with a queue of scripted replies.

Usage::

    model = FakeModel(role="big")
    model.enqueue(tool_calls=[("remember", {"text": "milk"})])
    model.enqueue(text="Saved.")
    result = await run_loop(model, [{"role": "user", "content": "remember milk"}], tools, caller)
    assert model.history[1].messages[-1].role == "tool"

It emits the same ``model_call`` events as the real models, so route and counting logic can
be tested with it. With ``default_text`` set, an empty queue answers that text instead of
failing the test. Called with ``on_text`` it streams a text answer word by word, waiting
``chunk_delay_s`` between words (a tool turn is not streamed); ``.streamed`` counts the calls
that were.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.models.base import (
    Message,
    ModelError,
    Observer,
    Reply,
    TextFeed,
    TextSink,
    ToolCall,
    ToolSpec,
    Usage,
    as_messages,
    emit,
)
from graphs.protocols import request_sent

_ids = itertools.count(1)


@dataclass
class FakeCall:
    """One call the fake received."""

    messages: list[Message]
    tools: list[ToolSpec] | None
    max_tokens: int
    purpose: str | None


@dataclass
class _Scripted:
    reply: Reply | None
    error: Exception | None
    delay_s: float


class FakeModel:
    """A model that answers from ``enqueue``d replies and records every call in ``.history``."""

    def __init__(self, *, role: str = "small", name: str = "fake-model",
                 provider: str = "fake", default_text: str | None = None) -> None:
        self.role = role
        self.name = name
        self.provider = provider
        self.default_text = default_text
        self.history: list[FakeCall] = []
        self.chunk_delay_s = 0.0
        self.streamed = 0
        self._queue: deque[_Scripted] = deque()

    def enqueue(self, text: str = "",
                tool_calls: Sequence[ToolCall | tuple[str, dict[str, Any]]] = (), *,
                input_tokens: int = 10, output_tokens: int = 5, cost_usd: float = 0.0,
                error: Exception | None = None, delay_s: float = 0.0) -> None:
        """Queue one reply (or, with ``error``, one failure such as ``ModelError(...)``).

        ``tool_calls`` are ``ToolCall``s or ``(name, arguments)`` pairs; ``delay_s`` makes the
        call take that long (for overlap tests).
        """
        calls = [c if isinstance(c, ToolCall) else
                 ToolCall(id=f"fake_call_{next(_ids)}", name=c[0], arguments=dict(c[1]))
                 for c in tool_calls]
        reply = Reply(text=text, tool_calls=calls, usage=Usage(input_tokens, output_tokens),
                      model=self.name, provider=self.provider, cost_usd=cost_usd)
        self._queue.append(_Scripted(None if error else reply, error, delay_s))

    @property
    def pending(self) -> int:
        """Replies still queued."""
        return len(self._queue)

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None,
                       on_text: TextSink | None = None) -> Reply:
        """Record the call and answer with the next scripted reply (streamed to ``on_text``)."""
        self.history.append(FakeCall(as_messages(messages), list(tools) if tools else None,
                                     max_tokens, purpose))
        request_sent()  # recorded: as far as a fake goes, the request has left
        if self._queue:
            scripted = self._queue.popleft()
        elif self.default_text is not None:
            scripted = _Scripted(Reply(self.default_text, [], Usage(10, 5), self.name,
                                       self.provider), None, 0.0)
        else:
            raise AssertionError(f"FakeModel({self.role}) got a call with nothing queued "
                                 f"(purpose={purpose!r})")
        if scripted.delay_s:
            await asyncio.sleep(scripted.delay_s)
        event: dict[str, Any] = {"event": "model_call", "role": self.role,
                                 "provider": self.provider, "model": self.name,
                                 "purpose": purpose, "duration_s": scripted.delay_s}
        if scripted.error is not None:
            message = (scripted.error.user_message if isinstance(scripted.error, ModelError)
                       else str(scripted.error))
            emit(observer, {**event, "input_tokens": 0, "output_tokens": 0,
                                              "cost_usd": 0.0, "error": message})
            raise scripted.error
        reply = scripted.reply
        assert reply is not None
        if on_text is not None and not reply.tool_calls:
            self.streamed += 1
            feed = TextFeed(on_text, observer, role=self.role,
                            purpose=purpose)
            for word in reply.text.split(" "):
                feed.add(word if not feed.text else f" {word}")
                await asyncio.sleep(self.chunk_delay_s)
        emit(observer, {**event, "input_tokens": reply.usage.input_tokens,
                                          "output_tokens": reply.usage.output_tokens,
                                          "cost_usd": reply.cost_usd})
        # a copy, so a caller mutating the reply cannot change what the test scripted
        return Reply(reply.text, list(reply.tool_calls), reply.usage, reply.model,
                     reply.provider, reply.cost_usd)

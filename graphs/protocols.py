"""What workflows and nodes need of a model and of the tool loop, and how a reply's JSON is read.

``bot.models.Model`` satisfies ``ChatModel`` and ``bot.tools.loop.run_loop`` satisfies
``AgentLoop``; typing them here, by small protocols, is how ``graphs/`` never imports
``bot/``. Messages are plain mappings (``{"role": "user", "content": ...}``).
``parse_json_object`` is the one reader of "the JSON object in a model's reply".

``request_sent`` is how a model says its request has left (its bytes are written): work that
should not compete with that request for the event loop (triage's classify call, while the
agent's speculative first turn is on its way) waits for it (``when_sent`` in that request's
context). A model that cannot tell simply never says it; whoever waits has a time limit.

``chosen_model`` is how a run uses its chat's choice of a model (``/model``): a model that
follows the chat (``PerChat``, the bot's ``ChatBigModel``) gives the chat's.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, TypeVar

from graphs.graph import Observer
from graphs.live import TextSink

M = TypeVar("M")


class HasText(Protocol):
    """What a node reads from a model reply or a loop result."""

    @property
    def text(self) -> str: ...


class ChatModel(Protocol):
    """A model of one role (small or big)."""

    async def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Observer | None = None,
                       on_text: TextSink | None = None) -> HasText: ...


class AgentLoop(Protocol):
    """The tool loop: the model picks tools until it answers (``context``: the node's run
    context, for its steps, its observer and the answer it was woken with)."""

    def __call__(self, model: Any, messages: list[dict[str, Any]], tools: Any, caller: Any, *,
                 max_iterations: int = 8, observer: Observer | None = None,
                 purpose: str = "agent", on_text: TextSink | None = None,
                 context: Any = None) -> Awaitable[HasText]: ...


class PerChat(Protocol):
    """A model that is, for each chat, the model that chat chose."""

    def model_for(self, platform: str, chat_id: str) -> Any: ...


def chat_of(meta: Mapping[str, Any]) -> tuple[str, str] | None:
    """The chat a run answers (``platform`` and ``chat_id`` of its meta), if any."""
    platform = meta.get("platform")
    chat_id = meta.get("chat_id")
    return (str(platform), str(chat_id)) if platform and chat_id is not None else None


def chosen_model(model: M, chat: tuple[str, str] | None) -> M:
    """``model`` as ``chat`` chose it: a ``PerChat`` model's pick, any other model itself."""
    pick = getattr(model, "model_for", None)
    return model if chat is None or not callable(pick) else pick(*chat)


# The one context variable of the request-sent hook: the hook is called by httpx, inside the
# provider SDK's request (an event hook and a trace extension), with no argument of ours; a
# parameter cannot reach it, so the caller's context says whom to tell.
_on_sent: contextvars.ContextVar[Callable[[], None] | None] = contextvars.ContextVar(
    "on_request_sent", default=None)


def when_sent(callback: Callable[[], None] | None) -> None:
    """In the current context, call ``callback`` once a model request made here has left."""
    _on_sent.set(callback)


def awaits_sent() -> bool:
    """Whether anyone in the current context waits for the next request to leave."""
    return _on_sent.get() is not None


def request_sent() -> None:
    """A model's request has left (called by the model): tell whoever waits for it."""
    callback = _on_sent.get()
    if callback is not None:
        callback()


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in a model's reply (bare, or inside prose or a code fence)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            found, _ = decoder.raw_decode(text, start)
        except ValueError:
            found = None
        if isinstance(found, dict):
            return found
        start = text.find("{", start + 1)
    return None

"""The provider-neutral model types: messages, tool calls, replies, errors and the Model protocol.

Every provider (anthropic, openai, offline) speaks in these types, so the agent loop, the
gateway and the graph nodes never see a provider's own shapes. A message may also be given as
a plain mapping (``{"role": "user", "content": "hi"}``): that is how ``graphs/`` talks to a
model without importing anything from ``bot/``.
"""

from __future__ import annotations

import base64
import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from graphs.graph import Observer as Observer  # the one observer type, for the models too
from graphs.live import TextSink as TextSink  # where a streamed answer's text goes
from graphs.protocols import awaits_sent, request_sent

Role = Literal["system", "user", "assistant", "tool"]

ROLES: frozenset[str] = frozenset({"system", "user", "assistant", "tool"})


@dataclass
class ToolCall:
    """One tool the model asked to run, with its arguments already decoded."""

    id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ImagePart:
    """An image a user message carries: a file prepared by ``bot.media.images`` (JPEG, PNG, WebP or
    GIF, long edge at most 1568 px), read only when a provider sends it."""

    media_type: str
    path: str

    def base64_data(self) -> str | None:
        """The file as base64, or None when it is gone (the message was answered since)."""
        try:
            with open(self.path, "rb") as file:
                return base64.b64encode(file.read()).decode("ascii")
        except OSError:
            return None


IMAGE_GONE = "[an image was attached here; it is no longer available]"


@dataclass
class Message:
    """One turn of a conversation; ``tool`` messages answer the call named by ``tool_call_id``.

    A user message may carry ``images`` (each provider sends them as its own image blocks).
    """

    role: Role
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    images: list[ImagePart] = field(default_factory=list)


@dataclass
class Usage:
    """Tokens in and out of one call."""

    input_tokens: int
    output_tokens: int


@dataclass
class Reply:
    """What a model answered: text, tool calls, usage and what it cost.

    ``refused`` is set (to the sentence saying why) when the call was refused, e.g. by the
    daily budget: the text is then the offline assistant's, never content to keep.
    """

    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    model: str
    provider: str
    cost_usd: float = 0.0
    refused: str | None = None


@dataclass(frozen=True)
class ToolSpec:
    """A tool as a model sees it: name, description and a JSON schema of its parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


class ModelError(Exception):
    """A model call that failed; ``user_message`` is one short sentence safe to show anyone.

    ``transient`` tells an outer retry layer (the engine's) whether trying again could help;
    it is False once our own retry layer has given up, so retries never multiply.
    """

    def __init__(self, user_message: str, *, transient: bool = False,
                 status: int | None = None) -> None:
        super().__init__(user_message)
        self.user_message = user_message
        self.transient = transient
        self.status = status


@runtime_checkable
class Model(Protocol):
    """One model in one role ("small" or "big") behind a provider."""

    provider: str
    name: str
    role: str

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None,
                       on_text: TextSink | None = None) -> Reply:
        """Answer the conversation; may ask for tools from ``tools``.

        With ``on_text`` the answer is streamed: the sink gets the text so far as it grows,
        and ``""`` when what it got is not the answer after all (the turn asks for tools, or
        the call is tried again); the Reply is the whole answer as without it.
        """
        ...


@dataclass
class Models:
    """The two roles the bot uses: a cheap fast model and a capable one."""

    small: Model
    big: Model


def as_message(item: Message | Mapping[str, Any]) -> Message:
    """Accept a Message or a plain mapping with the same fields."""
    if isinstance(item, Message):
        return item
    role = str(item.get("role", "user"))
    if role not in ROLES:
        raise ValueError(f"message role {role!r} is not one of {sorted(ROLES)}")
    calls = [c if isinstance(c, ToolCall) else
             ToolCall(id=str(c["id"]), name=str(c["name"]), arguments=dict(c["arguments"]))
             for c in item.get("tool_calls") or []]
    call_id = item.get("tool_call_id")
    images = [i if isinstance(i, ImagePart) else
              ImagePart(media_type=str(i["media_type"]), path=str(i["path"]))
              for i in item.get("images") or []]
    return Message(role=role, content=str(item.get("content") or ""),  # type: ignore[arg-type]
                   tool_calls=calls, tool_call_id=str(call_id) if call_id else None,
                   images=images)


def as_messages(items: Sequence[Message | Mapping[str, Any]]) -> list[Message]:
    """Normalise a whole conversation (see ``as_message``)."""
    return [as_message(item) for item in items]


def last_user_text(messages: Sequence[Message]) -> str:
    """The text of the most recent user message, or "" if there is none."""
    for message in reversed(messages):
        if message.role == "user":
            return message.content
    return ""


def last_user_images(messages: Sequence[Message]) -> list[ImagePart]:
    """The images of the most recent user message (none when it has none)."""
    for message in reversed(messages):
        if message.role == "user":
            return message.images
    return []


def emit(observer: Observer | None, event: dict[str, Any]) -> None:
    """Send one event; an observer's failure never breaks a model call."""
    if observer is None:
        return
    with contextlib.suppress(Exception):  # tracing is best-effort by design
        observer(event)


async def _watch_sending(request: Any) -> None:
    """An HTTP client's request hook: a request someone waits to see leave (a speculative
    turn's, ``graphs.protocols.request_sent``) is traced, so its written body is noticed."""
    if awaits_sent():
        request.extensions["trace"] = _on_trace


async def _on_trace(name: str, info: dict[str, Any]) -> None:
    if name.endswith("send_request_body.complete"):
        request_sent()


def sent_hooks() -> dict[str, list[Any]]:
    """The SDK's HTTP client's event hooks that say when a request has left (the provider
    SDKs take an ``httpx`` client of their own make: ``DefaultAsyncHttpxClient``)."""
    return {"request": [_watch_sending]}


class TextFeed:
    """A streamed turn's text on its way to a sink: the first token timed in the trace, and
    nothing more shown once the turn turns out to ask for tools (``hold``)."""

    def __init__(self, sink: TextSink | None, observer: Observer | None, *, role: str,
                 purpose: str | None) -> None:
        self.sink = sink
        self.observer = observer
        self.role = role
        self.purpose = purpose
        self.text = ""
        self.held = sink is None
        self.watch = Stopwatch()
        self.first_token = False

    def add(self, delta: str) -> None:
        """More text of the answer."""
        if self.held or not delta:
            return
        self.text += delta
        if not self.first_token and self.text.strip():
            self.first_token = True
            emit(self.observer, {"event": "first_token", "role": self.role,
                                 "purpose": self.purpose, "after_s": self.watch.elapsed()})
        if self.sink is not None:
            self.sink(self.text)

    def hold(self) -> None:
        """The turn asks for tools: what was shown is taken back, and the rest not shown."""
        self.restart()
        self.held = True

    def restart(self) -> None:
        """Start over (a retry, a fallback): what was shown is taken back."""
        if self.text and self.sink is not None:
            self.sink("")
        self.text, self.held = "", self.sink is None


class Stopwatch:
    """Seconds since creation, for ``duration_s`` fields."""

    def __init__(self) -> None:
        self.start = time.perf_counter()

    def elapsed(self) -> float:
        """Seconds elapsed, rounded to the microsecond."""
        return round(time.perf_counter() - self.start, 6)

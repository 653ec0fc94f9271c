"""The OpenAI provider: one Chat Completions call through the ``openai`` SDK, in our types.

It also serves any OpenAI-compatible server (Ollama, vLLM, llama.cpp) through ``base_url``, so
it uses only what those servers share: plain chat messages, function tools, ``max_tokens``.
The SDK is imported on first use and built with ``max_retries=0`` (see ``bot.models.retry``)
and the ``timeout`` given (``FRONTDESK_MODEL_TIMEOUT``), on an HTTP client whose hook says when
a request has left (``sent_hooks``: a speculative turn's classify call waits for that).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from bot.models.base import (
    IMAGE_GONE,
    ImagePart,
    Message,
    Reply,
    TextFeed,
    ToolCall,
    ToolSpec,
    Usage,
    sent_hooks,
)
from bot.models.retry import broken_off, failure_from_sdk, malformed, transport_errors

KEY_ENV = "OPENAI_API_KEY"
LOCAL_PLACEHOLDER_KEY = "local-server-needs-no-key"


class OpenAIClient:
    """Sends one request to Chat Completions and normalises the answer (no retries here)."""

    provider = "openai"

    def __init__(self, *, name: str, api_key: str | None, base_url: str | None = None,
                 timeout: float = 60.0) -> None:
        self.name = name
        self._api_key = api_key or LOCAL_PLACEHOLDER_KEY  # a local server needs no real key
        self._base_url = base_url
        self.timeout = timeout
        self._client: Any = None
        self.label = "OpenAI" if base_url is None else "OpenAI-compatible"

    def _sdk_client(self) -> Any:
        """Build the SDK client once, importing the SDK only now."""
        if self._client is None:
            import openai

            self._client = openai.AsyncOpenAI(
                api_key=self._api_key, base_url=self._base_url, timeout=self.timeout,
                max_retries=0,
                http_client=openai.DefaultAsyncHttpxClient(event_hooks=sent_hooks()))
        return self._client

    async def request(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                      max_tokens: int, feed: TextFeed | None = None) -> Reply:
        """One call; SDK errors become ``ProviderFailure``s with a short message. With a
        ``feed`` the answer is streamed (``stream=True``) and its text fed as it comes."""
        import openai

        kwargs: dict[str, Any] = {"model": self.name, "messages": to_wire(messages)}
        # OpenAI's own newer models refuse max_tokens; local servers may not know the new name.
        kwargs["max_tokens" if self._base_url else "max_completion_tokens"] = max_tokens
        if tools:
            kwargs["tools"] = [{"type": "function", "function": {
                "name": t.name, "description": t.description, "parameters": t.parameters}}
                for t in tools]
        try:
            if feed is not None:
                return await self._streamed(kwargs, feed)
            result = await self._sdk_client().chat.completions.create(**kwargs)
        except openai.OpenAIError as exc:
            raise failure_from_sdk(exc, openai, label=self.label, key_env=KEY_ENV,
                                   model=self.name) from None
        return from_wire(result, fallback_model=self.name, label=self.label)

    async def _streamed(self, kwargs: dict[str, Any], feed: TextFeed) -> Reply:
        """The same call as a stream of chunks; text goes to ``feed`` until a tool call shows
        up (a tool turn is not shown). The chunks are put together here (``Chunks``): the
        SDK's own accumulator rebuilds its whole snapshot at every chunk, which made a long
        answer's stream cost seconds of CPU."""
        chunks = Chunks()
        stream = await self._sdk_client().chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True})
        try:
            async with stream:
                async for chunk in stream:
                    delta = chunks.add(chunk)
                    if chunks.calls:
                        feed.hold()
                    feed.add(delta)
        except transport_errors():
            raise broken_off(self.label) from None
        return chunks.reply(fallback_model=self.name, label=self.label)

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections, if a client was ever built."""
        if self._client is not None:
            await self._client.close()


def to_wire(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """Our messages as Chat Completions messages."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id or "",
                         "content": message.content})
        elif message.role == "assistant" and message.tool_calls:
            wire.append({"role": "assistant", "content": message.content or None,
                         "tool_calls": [{"id": c.id, "type": "function", "function": {
                             "name": c.name, "arguments": json.dumps(c.arguments)}}
                             for c in message.tool_calls]})
        elif message.role == "user" and message.images:
            parts = [{"type": "text", "text": message.content}] if message.content else []
            wire.append({"role": "user",
                         "content": parts + [image_part(i) for i in message.images]})
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


def image_part(image: ImagePart) -> dict[str, Any]:
    """An ``image_url`` content part holding a data URL (a text part if the file is gone)."""
    data = image.base64_data()
    if data is None:
        return {"type": "text", "text": IMAGE_GONE}
    return {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{data}"}}


def from_wire(result: Any, *, fallback_model: str, label: str) -> Reply:
    """A Chat Completions answer as a Reply; anything unreadable is a permanent failure."""
    choices = getattr(result, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise malformed(label)
    message = getattr(choices[0], "message", None)
    if message is None:
        raise malformed(label)
    calls: list[ToolCall] = []
    for index, call in enumerate(getattr(message, "tool_calls", None) or []):
        function = getattr(call, "function", None)
        if function is None:
            continue
        calls.append(ToolCall(id=str(getattr(call, "id", None) or f"call_{index}"),
                              name=str(function.name),
                              arguments=decode_arguments(function.arguments)))
    usage = getattr(result, "usage", None)
    return Reply(text=str(getattr(message, "content", None) or ""), tool_calls=calls,
                 usage=Usage(int(getattr(usage, "prompt_tokens", 0) or 0),
                             int(getattr(usage, "completion_tokens", 0) or 0)),
                 model=str(getattr(result, "model", None) or fallback_model), provider="openai")


class Chunks:
    """A streamed answer's chunks put together: the text, each tool call by its index, the
    model and the usage (the last chunk's, with ``include_usage``)."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.calls: dict[int, list[str]] = {}  # index -> [id, name, argument pieces...]
        self.model = ""
        self.usage: Any = None

    def add(self, chunk: Any) -> str:
        """Take one chunk; the text it adds."""
        self.model = str(getattr(chunk, "model", None) or self.model)
        self.usage = getattr(chunk, "usage", None) or self.usage
        added = ""
        for choice in (getattr(chunk, "choices", None) or [])[:1]:
            delta = choice.delta
            added = str(getattr(delta, "content", None) or "")
            self.text.append(added)
            for call in getattr(delta, "tool_calls", None) or []:
                parts = self.calls.setdefault(int(call.index), ["", ""])
                parts[0] = str(call.id or parts[0])
                function = call.function
                if function is not None:
                    parts[1] = str(function.name or parts[1])
                    parts.append(str(function.arguments or ""))
        return added

    def reply(self, *, fallback_model: str, label: str) -> Reply:
        """The whole answer, as ``from_wire`` makes it of a whole completion."""
        if not self.model and not self.text and not self.calls:
            raise malformed(label)
        calls = [ToolCall(id=parts[0] or f"call_{index}", name=parts[1],
                          arguments=decode_arguments("".join(parts[2:])))
                 for index, parts in sorted(self.calls.items()) if parts[1]]
        return Reply(text="".join(self.text), tool_calls=calls,
                     usage=Usage(int(getattr(self.usage, "prompt_tokens", 0) or 0),
                                 int(getattr(self.usage, "completion_tokens", 0) or 0)),
                     model=self.model or fallback_model, provider="openai")


def decode_arguments(raw: Any) -> dict[str, Any]:
    """Tool arguments arrive as a JSON string; small local models sometimes send bad JSON.

    Bad JSON becomes no arguments: the tool then reports what is missing, as an observation
    the model can correct, rather than the whole turn failing.
    """
    if isinstance(raw, dict):
        return raw
    try:
        decoded = json.loads(raw or "{}")
    except (TypeError, ValueError):
        return {}
    return decoded if isinstance(decoded, dict) else {}

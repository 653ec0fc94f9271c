"""The Anthropic provider: one Messages API call through the ``anthropic`` SDK, in our types.

The SDK is imported on first use (it takes about a second), and its client is built with
``max_retries=0`` and the ``timeout`` given (``FRONTDESK_MODEL_TIMEOUT``): retries belong to
``bot.models.retry`` alone. Its HTTP client's hook says when a request has left
(``sent_hooks``: a speculative turn's classify call waits for that).
"""

from __future__ import annotations

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
from bot.models.retry import (
    ProviderFailure,
    broken_off,
    failure_from_sdk,
    malformed,
    transport_errors,
)

LABEL = "Anthropic"
KEY_ENV = "ANTHROPIC_API_KEY"


class AnthropicClient:
    """Sends one request to the Messages API and normalises the answer (no retries here)."""

    provider = "anthropic"
    label = LABEL

    def __init__(self, *, name: str, api_key: str | None, base_url: str | None = None,
                 timeout: float = 60.0) -> None:
        self.name = name
        self._api_key = api_key
        self._base_url = base_url
        self.timeout = timeout
        self._client: Any = None

    def _sdk_client(self) -> Any:
        """Build the SDK client once, importing the SDK only now."""
        if self._client is None:
            import anthropic

            self._client = anthropic.AsyncAnthropic(
                api_key=self._api_key or "", base_url=self._base_url, timeout=self.timeout,
                max_retries=0,
                http_client=anthropic.DefaultAsyncHttpxClient(event_hooks=sent_hooks()))
        return self._client

    async def request(self, messages: Sequence[Message], tools: Sequence[ToolSpec] | None,
                      max_tokens: int, feed: TextFeed | None = None) -> Reply:
        """One call; SDK errors become ``ProviderFailure``s with a short message. With a
        ``feed`` the answer is streamed (``messages.stream``) and its text fed as it comes."""
        import anthropic

        if not self._api_key and not self._base_url:
            raise ProviderFailure(f"No {KEY_ENV} is set for the Anthropic provider.",
                                  transient=False)
        system, wire = to_wire(messages)
        kwargs: dict[str, Any] = {"model": self.name, "max_tokens": max_tokens, "messages": wire}
        if system:
            kwargs["system"] = system
        if tools:
            kwargs["tools"] = [{"name": t.name, "description": t.description,
                                "input_schema": t.parameters} for t in tools]
        try:
            if feed is None:
                result = await self._sdk_client().messages.create(**kwargs)
            else:
                result = await self._streamed(kwargs, feed)
        except anthropic.AnthropicError as exc:
            raise failure_from_sdk(exc, anthropic, label=LABEL, key_env=KEY_ENV,
                                   model=self.name) from None
        return from_wire(result, fallback_model=self.name)

    async def _streamed(self, kwargs: dict[str, Any], feed: TextFeed) -> Any:
        """The same call as the SDK's message stream; text goes to ``feed`` until a tool use
        block starts (a tool turn is not shown), the final message is the SDK's own."""
        try:
            async with self._sdk_client().messages.stream(**kwargs) as stream:
                async for event in stream:
                    if event.type == "content_block_start" and \
                            event.content_block.type == "tool_use":
                        feed.hold()
                    elif event.type == "text":
                        feed.add(event.text)
                return await stream.get_final_message()
        except transport_errors():
            raise broken_off(LABEL) from None

    async def aclose(self) -> None:
        """Close the SDK's HTTP connections, if a client was ever built."""
        if self._client is not None:
            await self._client.close()


def to_wire(messages: Sequence[Message]) -> tuple[str, list[dict[str, Any]]]:
    """Our messages as the Messages API wants them: a system string and alternating turns."""
    system = "\n\n".join(m.content for m in messages if m.role == "system" and m.content)
    wire: list[dict[str, Any]] = []
    for message in messages:
        blocks: list[dict[str, Any]]
        if message.role == "system":
            continue
        if message.role == "tool":
            role = "user"
            blocks = [{"type": "tool_result", "tool_use_id": message.tool_call_id or "",
                       "content": message.content or "(no output)"}]
        else:
            role = message.role
            blocks = [image_block(image) for image in message.images]  # images first, as advised
            blocks += [{"type": "text", "text": message.content}] if message.content else []
            blocks += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments}
                       for c in message.tool_calls]
        if not blocks:
            continue  # the API refuses empty turns
        if wire and wire[-1]["role"] == role:  # tool results and the next user turn share one
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    return system, wire


def image_block(image: ImagePart) -> dict[str, Any]:
    """An ``image`` content block with a base64 source (a text block if the file is gone)."""
    data = image.base64_data()
    if data is None:
        return {"type": "text", "text": IMAGE_GONE}
    return {"type": "image", "source": {"type": "base64", "media_type": image.media_type,
                                        "data": data}}


def from_wire(result: Any, *, fallback_model: str) -> Reply:
    """A Messages API answer as a Reply; anything unreadable is a permanent failure."""
    content = getattr(result, "content", None)
    usage = getattr(result, "usage", None)
    if not isinstance(content, list) or usage is None:
        raise malformed(LABEL)
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in content:
        kind = getattr(block, "type", None)
        if kind == "text":
            texts.append(str(block.text))
        elif kind == "tool_use":
            arguments = block.input if isinstance(block.input, dict) else {}
            calls.append(ToolCall(id=str(block.id), name=str(block.name), arguments=arguments))
    return Reply(text="".join(texts), tool_calls=calls,
                 usage=Usage(int(usage.input_tokens or 0), int(usage.output_tokens or 0)),
                 model=str(getattr(result, "model", None) or fallback_model),
                 provider="anthropic")

"""A fake Anthropic Messages API server on loopback, speaking the real wire format.

Point the real ``anthropic`` SDK (or ``ANTHROPIC_BASE_URL``) at ``server.base_url``. Script
replies with ``enqueue(text_reply(...))``, ``tool_use_reply(...)`` or ``error_reply(...)``
(529 is "overloaded"); when nothing is queued it answers ``server.default_text``.
``.requests`` logs what was sent; ``.images`` the image blocks it carried, decoded.

Usage::

    async with FakeAnthropicServer() as server:
        server.enqueue(error_reply(529), text_reply("hello"))
        client = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="k", max_retries=0)
"""

from __future__ import annotations

import base64
import itertools
import json
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from tests.fakes.scripted_server import (
    RecordedRequest,
    ScriptedReply,
    ScriptedServer,
    SseEvent,
    words,
)

_ids = itertools.count(1)

ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
               403: "permission_error", 404: "not_found_error", 413: "request_too_large",
               429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}


def message(content: list[dict[str, Any]], stop_reason: str, *, model: str, input_tokens: int,
            output_tokens: int) -> dict[str, Any]:
    """A ``message`` object as the Messages API returns it."""
    return {"id": f"msg_fake{next(_ids)}", "type": "message", "role": "assistant",
            "model": model, "content": content, "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}


def text_reply(text: str, *, model: str = "claude-haiku-4-5", input_tokens: int = 12,
               output_tokens: int = 5, stall_s: float = 0.0) -> ScriptedReply:
    """A plain assistant answer."""
    body = message([{"type": "text", "text": text}], "end_turn", model=model,
                   input_tokens=input_tokens, output_tokens=output_tokens)
    return ScriptedReply(body, headers={"request-id": f"req_fake{next(_ids)}"},
                         stall_s=stall_s)


def tool_use_reply(calls: Sequence[tuple[str, dict[str, Any]]], *, text: str | None = None,
                   model: str = "claude-haiku-4-5", input_tokens: int = 20,
                   output_tokens: int = 8) -> ScriptedReply:
    """An assistant turn asking for tools: ``[(name, input), ...]``."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": f"toolu_fake{next(_ids)}", "name": name,
                 "input": arguments} for name, arguments in calls]
    body = message(content, "tool_use", model=model, input_tokens=input_tokens,
                   output_tokens=output_tokens)
    return ScriptedReply(body, headers={"request-id": f"req_fake{next(_ids)}"})


def error_reply(status: int, message_text: str | None = None, *,
                retry_after: float | None = None) -> ScriptedReply:
    """An API error with Anthropic's error body (and ``retry-after`` when given)."""
    kind = ERROR_TYPES.get(status, "api_error")
    request_id = f"req_fake{next(_ids)}"
    headers = {"request-id": request_id}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    body = {"type": "error", "error": {"type": kind, "message": message_text or kind},
            "request_id": request_id}
    return ScriptedReply(body, status=status, headers=headers)


class FakeAnthropicServer(ScriptedServer):
    """``POST /v1/messages``, answered from the script; ``GET /v1/models``, the model list
    (refused with Anthropic's 401 when ``api_key`` is set and the request's differs)."""

    def __init__(self, *, default_text: str = "fake reply", api_key: str | None = None,
                 models: Sequence[str] = ("claude-haiku-4-5", "claude-sonnet-4-6")) -> None:
        super().__init__()
        self.default_text = default_text
        self.api_key = api_key
        self.models = list(models)

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` / ``ANTHROPIC_BASE_URL``."""
        return self.url

    @property
    def images(self) -> list[dict[str, Any]]:
        """Every image block (base64 source) of every request so far: media type and bytes."""
        return [{"media_type": block["source"]["media_type"],
                 "data": base64.b64decode(block["source"]["data"])}
                for block in self.content_parts("image")]

    def routes(self) -> list[web.RouteDef]:
        """The Messages endpoint."""
        return [web.post("/v1/messages", self.answer), web.get("/v1/models", self._models)]

    async def _models(self, request: web.Request) -> web.Response:
        sent = {request.headers.get("x-api-key"), request.headers.get("Authorization")}
        if self.api_key is not None and not sent & {self.api_key, f"Bearer {self.api_key}"}:
            return error_reply(401, "invalid x-api-key").to_response()
        data = [{"type": "model", "id": name, "display_name": name,
                 "created_at": "2025-01-01T00:00:00Z"} for name in self.models]
        return web.json_response({"data": data, "has_more": False,
                                  "first_id": self.models[0] if self.models else None,
                                  "last_id": self.models[-1] if self.models else None})

    def sse_events(self, body: Any, request: RecordedRequest) -> list[SseEvent]:
        """A ``message`` as the Messages API's stream: ``message_start``, each content block
        (``content_block_start``, its text word by word or its tool input as JSON,
        ``content_block_stop``), ``message_delta`` with the stop reason and usage,
        ``message_stop``."""
        usage = body["usage"]
        start = {**body, "content": [], "stop_reason": None,
                 "usage": {**usage, "output_tokens": 1}}
        events: list[SseEvent] = [("message_start", {"type": "message_start",
                                                     "message": start})]
        for index, block in enumerate(body["content"]):
            if block["type"] == "text":
                events.append(("content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {"type": "text", "text": ""}}))
                events += [("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "text_delta", "text": word}})
                    for word in words(block["text"])]
            else:
                events.append(("content_block_start", {
                    "type": "content_block_start", "index": index,
                    "content_block": {**block, "input": {}}}))
                events.append(("content_block_delta", {
                    "type": "content_block_delta", "index": index,
                    "delta": {"type": "input_json_delta",
                              "partial_json": json.dumps(block["input"])}}))
            events.append(("content_block_stop", {"type": "content_block_stop",
                                                  "index": index}))
        events.append(("message_delta", {
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": usage["output_tokens"]}}))
        return [*events, ("message_stop", {"type": "message_stop"})]

    def default_reply(self, request: RecordedRequest) -> ScriptedReply:
        """``default_text`` as a plain answer."""
        model = request.json.get("model", "claude-haiku-4-5") if request.json else "claude"
        return text_reply(self.default_text, model=str(model))

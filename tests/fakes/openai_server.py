"""A fake OpenAI Chat Completions server on loopback, speaking the real wire format.

Point the real ``openai`` SDK (or ``OPENAI_BASE_URL``) at ``server.base_url``. Script replies
with ``enqueue(text_reply(...))``, ``tool_call_reply(...)`` or ``error_reply(...)``; when
nothing is queued it answers ``server.default_text``. ``.requests`` logs what was sent.

Usage::

    async with FakeOpenAIServer() as server:
        server.enqueue(error_reply(429, retry_after=1), text_reply("hello"))
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Sequence
from typing import Any

from aiohttp import web

from tests.fakes.scripted_server import RecordedRequest, ScriptedReply, ScriptedServer

_ids = itertools.count(1)

ERROR_TYPES = {400: ("invalid_request_error", None),
               401: ("invalid_request_error", "invalid_api_key"),
               403: ("permission_denied", None),
               404: ("invalid_request_error", "model_not_found"),
               429: ("requests", "rate_limit_exceeded"),
               500: ("server_error", None),
               503: ("server_error", None)}


def completion(message: dict[str, Any], finish_reason: str, *, model: str,
               prompt_tokens: int, completion_tokens: int) -> dict[str, Any]:
    """A ``chat.completion`` object around one assistant message."""
    return {"id": f"chatcmpl-fake{next(_ids)}", "object": "chat.completion",
            "created": int(time.time()), "model": model, "system_fingerprint": "fp_fake",
            "choices": [{"index": 0, "message": message, "logprobs": None,
                         "finish_reason": finish_reason}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def text_reply(text: str, *, model: str = "gpt-4.1-mini", prompt_tokens: int = 12,
               completion_tokens: int = 5, stall_s: float = 0.0) -> ScriptedReply:
    """A plain assistant answer."""
    message = {"role": "assistant", "content": text, "refusal": None}
    return ScriptedReply(completion(message, "stop", model=model, prompt_tokens=prompt_tokens,
                                    completion_tokens=completion_tokens), stall_s=stall_s)


def tool_call_reply(calls: Sequence[tuple[str, dict[str, Any]]], *, text: str | None = None,
                    model: str = "gpt-4.1-mini", prompt_tokens: int = 20,
                    completion_tokens: int = 8) -> ScriptedReply:
    """An assistant turn asking for tools: ``[(name, arguments), ...]``."""
    tool_calls = [{"id": f"call_fake{next(_ids)}", "type": "function",
                   "function": {"name": name, "arguments": json.dumps(arguments)}}
                  for name, arguments in calls]
    message = {"role": "assistant", "content": text, "refusal": None, "tool_calls": tool_calls}
    return ScriptedReply(completion(message, "tool_calls", model=model,
                                    prompt_tokens=prompt_tokens,
                                    completion_tokens=completion_tokens))


def error_reply(status: int, message: str | None = None, *,
                retry_after: float | None = None) -> ScriptedReply:
    """An API error with OpenAI's error body (and ``retry-after`` when given)."""
    kind, code = ERROR_TYPES.get(status, ("server_error" if status >= 500 else
                                          "invalid_request_error", None))
    headers = {"x-request-id": f"req_fake{next(_ids)}"}
    if retry_after is not None:
        headers["retry-after"] = f"{retry_after:g}"
    body = {"error": {"message": message or f"fake error {status}", "type": kind,
                      "param": None, "code": code}}
    return ScriptedReply(body, status=status, headers=headers)


class FakeOpenAIServer(ScriptedServer):
    """``POST /v1/chat/completions`` and ``GET /v1/models``, answered from the script."""

    def __init__(self, *, default_text: str = "fake reply") -> None:
        super().__init__()
        self.default_text = default_text

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` / ``OPENAI_BASE_URL``."""
        return f"{self.url}/v1"

    def routes(self) -> list[web.RouteDef]:
        """The Chat Completions endpoint, plus the model list some clients probe."""
        return [web.post("/v1/chat/completions", self.answer),
                web.get("/v1/models", self._models)]

    def default_reply(self, request: RecordedRequest) -> ScriptedReply:
        """``default_text`` as a plain answer."""
        model = request.json.get("model", "gpt-4.1-mini") if request.json else "gpt-4.1-mini"
        return text_reply(self.default_text, model=str(model))

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": "gpt-4.1-mini", "object": "model", "created": 0, "owned_by": "fake"}]})

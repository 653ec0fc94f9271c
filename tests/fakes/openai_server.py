"""A fake OpenAI Chat Completions server on loopback, speaking the real wire format.

Point the real ``openai`` SDK (or ``OPENAI_BASE_URL``) at ``server.base_url``. Script replies
with ``enqueue(text_reply(...))``, ``tool_call_reply(...)``, ``error_reply(...)`` or
``hung_reply()`` (never answers while the server runs); when nothing is queued it answers
``server.default_text``. ``POST /v1/audio/transcriptions`` (multipart, as the SDK uploads)
answers ``transcript_text``, or the next of ``transcript_replies`` (``(status, text)``), and
keeps each upload in ``.transcriptions``; ``.images`` lists the image parts chat requests
carried, decoded from their data URLs. ``.requests`` logs what was sent, ``.billed`` the
usage each answer reported (what the provider would charge). With ``bill_in_full=True`` the
default answer bills the request's whole ``max_tokens`` and about a token per four bytes of
input: an honest provider at its most expensive.

Usage::

    async with FakeOpenAIServer() as server:
        server.enqueue(error_reply(429, retry_after=1), text_reply("hello"))
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0)
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
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


def hung_reply() -> ScriptedReply:
    """A provider that takes the request and never answers (until the server stops)."""
    return ScriptedReply(completion({"role": "assistant", "content": "too late"}, "stop",
                                    model="gpt-4.1-mini", prompt_tokens=1, completion_tokens=1),
                         stall_s=3600.0)


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


@dataclass(frozen=True)
class Upload:
    """One transcription request: the form's model and the uploaded file."""

    model: str
    file_name: str
    content_type: str
    data: bytes
    authorization: str


def data_url_image(url: str) -> dict[str, Any]:
    """``data:<type>;base64,<data>`` as ``{"media_type", "data"}`` (bytes)."""
    head, _, data = url.partition(",")
    return {"media_type": head.removeprefix("data:").split(";")[0],
            "data": base64.b64decode(data)}


class FakeOpenAIServer(ScriptedServer):
    """``POST /v1/chat/completions``, ``POST /v1/audio/transcriptions`` and ``GET /v1/models``,
    answered from the script."""

    def __init__(self, *, default_text: str = "fake reply", bill_in_full: bool = False,
                 api_key: str | None = None, models: Sequence[str] = ("gpt-4.1-mini",)) -> None:
        super().__init__()
        self.default_text = default_text
        self.bill_in_full = bill_in_full
        self.api_key = api_key  # when set, GET /v1/models refuses any other key with a 401
        self.models = list(models)
        self.billed: list[tuple[str, int, int]] = []  # (model, prompt, completion) per answer
        self.transcript_text = "fake transcript"
        self.transcript_replies: deque[tuple[int, str]] = deque()
        self.transcriptions: list[Upload] = []

    @property
    def images(self) -> list[dict[str, Any]]:
        """Every image part of every chat request so far, in order."""
        return [data_url_image(part["image_url"]["url"])
                for part in self.content_parts("image_url")]

    async def _transcribe(self, request: web.Request) -> web.Response:
        form = await request.post()
        upload = form.get("file")
        if not isinstance(upload, web.FileField):
            return web.json_response({"error": {"message": "file is required"}}, status=400)
        with self._lock:
            self.transcriptions.append(Upload(
                str(form.get("model")), upload.filename, upload.content_type,
                upload.file.read(), request.headers.get("Authorization", "")))
            status, text = (self.transcript_replies.popleft() if self.transcript_replies
                            else (200, self.transcript_text))
            self._notify()
        if status != 200:
            return web.json_response({"error": {"message": text, "type": "server_error"}},
                                     status=status)
        return web.json_response({"text": text})

    @property
    def base_url(self) -> str:
        """What to pass as ``base_url`` / ``OPENAI_BASE_URL``."""
        return f"{self.url}/v1"

    def routes(self) -> list[web.RouteDef]:
        """The Chat Completions endpoint, plus the model list some clients probe."""
        return [web.post("/v1/chat/completions", self.answer),
                web.post("/v1/audio/transcriptions", self._transcribe),
                web.get("/v1/models", self._models)]

    def default_reply(self, request: RecordedRequest) -> ScriptedReply:
        """``default_text`` as a plain answer."""
        sent = request.json or {}
        model = str(sent.get("model", "gpt-4.1-mini"))
        if not self.bill_in_full:
            return text_reply(self.default_text, model=model)
        prompt = sum(len(str(m.get("content") or "").encode()) for m in sent.get("messages", []))
        output = int(sent.get("max_completion_tokens") or sent.get("max_tokens") or 16)
        return text_reply(self.default_text, model=model, prompt_tokens=prompt // 4 + 4,
                          completion_tokens=output)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        """Answer from the script, and keep the usage the answer reported."""
        response = await super().answer(request)
        body = response.text if isinstance(response, web.Response) else None
        if response.status == 200 and response.content_type == "application/json" and body:
            sent = json.loads(body)
            usage = sent.get("usage") or {}
            with self._lock:
                self.billed.append((str(sent.get("model")), int(usage.get("prompt_tokens", 0)),
                                    int(usage.get("completion_tokens", 0))))
                self._notify()
        return response

    def sse_events(self, body: Any, request: RecordedRequest) -> list[SseEvent]:
        """A ``chat.completion`` as ``chat.completion.chunk`` events: the role, the content
        word by word, each tool call (its name, then its arguments), the finish reason, the
        usage when ``stream_options.include_usage`` asks for it, then ``[DONE]``."""
        base = {"id": body["id"], "object": "chat.completion.chunk", "created": body["created"],
                "model": body["model"], "system_fingerprint": body.get("system_fingerprint")}
        choice = body["choices"][0]
        message = choice["message"]

        def chunk(delta: dict[str, Any], finish: str | None = None) -> SseEvent:
            return None, {**base, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                               "finish_reason": finish}]}

        events = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": word}) for word in words(message.get("content") or "")]
        for index, call in enumerate(message.get("tool_calls") or []):
            events.append(chunk({"tool_calls": [{"index": index, "id": call["id"],
                                                 "type": "function", "function": {
                                                     "name": call["function"]["name"],
                                                     "arguments": ""}}]}))
            events.append(chunk({"tool_calls": [{"index": index, "function": {
                "arguments": call["function"]["arguments"]}}]}))
        events.append(chunk({}, choice["finish_reason"]))
        if ((request.json or {}).get("stream_options") or {}).get("include_usage"):
            events.append((None, {**base, "choices": [], "usage": body["usage"]}))
        return [*events, (None, "[DONE]")]

    def on_streamed(self, body: Any) -> None:
        """Keep the usage a streamed answer reported, as for a whole one."""
        usage = body.get("usage") or {}
        with self._lock:
            self.billed.append((str(body.get("model")), int(usage.get("prompt_tokens", 0)),
                                int(usage.get("completion_tokens", 0))))
            self._notify()

    async def _models(self, request: web.Request) -> web.Response:
        if self.api_key is not None and \
                request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return error_reply(401, "Incorrect API key provided").to_response()
        return web.json_response({"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "fake"}
            for name in self.models]})

"""A loopback HTTP server that answers from a scripted queue: the base of the fake model APIs.

Each fake (``openai_server``, ``anthropic_server``) adds its routes and wire-format helpers.
Built on ``serving.LoopbackServer``: a server runs inside the test's event loop
(``async with``) or in a background thread with its own loop (``with server:``) for tests that
start ``frontdesk`` as a subprocess. Every request is appended to ``.requests``.

A request with ``"stream": true`` gets its scripted answer as server-sent events, in the API's
own event format (``sse_events``, per API), one word a chunk, ``chunk_delay_s`` apart (after
the reply's ``stall_s``, the time to the first token): how a big model writes.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.serving import LoopbackServer


@dataclass
class ScriptedReply:
    """One HTTP answer: status, JSON (or raw text) body, headers, and an optional stall."""

    body: Any = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stall_s: float = 0.0  # hold the answer this long (to provoke a client time-out)

    def to_response(self) -> web.Response:
        """The aiohttp response for this reply."""
        if isinstance(self.body, str | bytes):
            return web.Response(status=self.status, body=self.body, headers=self.headers,
                                content_type="text/plain")
        return web.Response(status=self.status, text=json.dumps(self.body),
                            headers=self.headers, content_type="application/json")


@dataclass
class RecordedRequest:
    """What the client sent."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    json: Any


Responder = Callable[[RecordedRequest], ScriptedReply]
SseEvent = tuple["str | None", Any]  # (event name or None, data: a JSON value or raw text)


MAX_CHUNKS = 100  # a longer answer goes several words a chunk: the SDKs parse each one


def words(text: str) -> list[str]:
    """A text as a stream's chunks: each word with the space before it (several words a
    chunk past ``MAX_CHUNKS`` words, so a long answer streams in a moment)."""
    found = re.findall(r"\s*\S+\s*?(?=\s|$)|\s+$", text) or ([text] if text else [])
    size = -(-len(found) // MAX_CHUNKS)
    return ["".join(found[i:i + size]) for i in range(0, len(found), size)] if size > 1 \
        else found


class ScriptedServer(LoopbackServer):
    """Answers requests from ``enqueue``d replies, then from ``responder`` (``default_reply``).

    ``await server.wait_for(lambda: len(server.requests) >= 2)`` waits for requests to arrive.
    """

    def __init__(self) -> None:
        super().__init__()
        self.replies: deque[ScriptedReply] = deque()
        self.requests: list[RecordedRequest] = []
        self.responder: Responder = self.default_reply
        self.chunk_delay_s = 0.0  # between two streamed chunks
        self.streamed = 0  # answers sent as a stream
        self.first_chunks: list[float] = []  # time.monotonic() of each stream's first chunk
        self.last_chunks: list[float] = []  # ... and of its last

    def routes(self) -> list[web.RouteDef]:
        """The API's routes; each handler should be ``self.answer``."""
        raise NotImplementedError

    def default_reply(self, request: RecordedRequest) -> ScriptedReply:
        """The answer when nothing is queued."""
        raise NotImplementedError

    def sse_events(self, body: Any, request: RecordedRequest) -> list[SseEvent]:
        """A whole answer as the API's stream of events."""
        raise NotImplementedError

    def on_streamed(self, body: Any) -> None:
        """An answer went out as a stream (the OpenAI fake keeps its usage)."""

    def build_app(self) -> web.Application:
        """The aiohttp application with the subclass's routes."""
        app = web.Application()
        app.add_routes(self.routes())
        return app

    def content_parts(self, kind: str) -> list[dict[str, Any]]:
        """Every part of type ``kind`` in the messages' content lists, request by request."""
        return [part for request in self.requests
                for message in (request.json or {}).get("messages", [])
                if isinstance(message.get("content"), list)
                for part in message["content"] if part.get("type") == kind]

    def enqueue(self, *replies: ScriptedReply) -> None:
        """Queue replies, answered in order, one per request."""
        with self._lock:
            self.replies.extend(replies)

    async def answer(self, request: web.Request) -> web.StreamResponse:
        """Record the request and send the next scripted reply."""
        try:
            payload = await request.json() if request.can_read_body else None
        except json.JSONDecodeError:
            payload = None
        headers = {key.lower(): value for key, value in request.headers.items()}
        recorded = RecordedRequest(request.method, request.path, headers, payload)
        with self._lock:
            self.requests.append(recorded)
            reply = self.replies.popleft() if self.replies else None
            self._notify()
        reply = reply or self.responder(recorded)
        if reply.stall_s:
            # held until the stall ends or the server stops, so no handler outlives the server
            with contextlib.suppress(TimeoutError):
                await self.wait_for(lambda: self._closing, timeout=reply.stall_s)
        if reply.status == 200 and isinstance(reply.body, dict) and \
                isinstance(payload, dict) and payload.get("stream"):
            self.on_streamed(reply.body)
            return await self._stream(request, self.sse_events(reply.body, recorded),
                                      reply.headers)
        return reply.to_response()

    async def _stream(self, request: web.Request, events: list[SseEvent],
                      headers: dict[str, str]) -> web.StreamResponse:
        """Send ``events`` as ``text/event-stream``, ``chunk_delay_s`` apart (with the reply's
        own ``headers`` too)."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream",
                                               "Cache-Control": "no-cache", **headers})
        try:
            await response.prepare(request)
        except ConnectionResetError:
            return response  # the client went away before the answer (a cancelled call)
        with self._lock:
            self.first_chunks.append(time.monotonic())
        for number, (name, data) in enumerate(events):
            if number and self.chunk_delay_s:
                with contextlib.suppress(TimeoutError):
                    await self.wait_for(lambda: self._closing, timeout=self.chunk_delay_s)
            if self._closing:
                break
            text = data if isinstance(data, str) else json.dumps(data)
            head = f"event: {name}\n" if name else ""
            try:
                await response.write(f"{head}data: {text}\n\n".encode())
            except ConnectionResetError:
                return response  # the client went away mid-stream (a killed bot)
        with self._lock:
            self.streamed += 1
            self.last_chunks.append(time.monotonic())
            self._notify()
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

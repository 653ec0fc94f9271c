"""Transports to MCP servers whose answers are capped while they are read, not after.

``capped_stdio`` starts a stdio server and reads its messages one line at a time, each line at
most ``limit`` bytes: a longer one stops the server at once (its process group is killed) and
ends the link, so no memory or time goes into an answer that would be cut anyway, and the next
call starts a fresh server. It is written here because the SDK's ``stdio_client`` reads a line
without any bound, joining it chunk by chunk: a 50 MB answer costs over a minute of the event
loop's time and the server is unusable until it has drained. Only the reading and the process
are ours; the JSON-RPC messages and the session stay the SDK's.

``capped_http_client`` is the SDK's HTTP client with each answer to a request counted as it
arrives and stopped past ``limit``: a JSON body (which the SDK reads whole, unbounded) or one
server-sent event (which the SDK bounds, but without telling us that the bound was hit).
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from typing import Any, TextIO

import anyio
import httpx2
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.client.stdio import get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.message import SessionMessage
from mcp_types import INTERNAL_ERROR, jsonrpc_message_adapter

EXIT_GRACE = 2.0  # seconds a server has to end by itself once its stdin is closed
Overran = Callable[[], None]  # told when an answer went past the limit


@asynccontextmanager
async def capped_stdio(command: str, args: Sequence[str], env: Mapping[str, str],
                       errlog: TextIO, limit: int, overran: Overran) -> AsyncIterator[Any]:
    """The read and write streams of a stdio server's session; the server stops on exit."""
    process = await anyio.open_process([command, *args],
                                       env={**get_default_environment(), **env},
                                       stderr=errlog, start_new_session=True)
    to_session, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_session = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_lines() -> None:
        assert process.stdout is not None
        lines = BufferedByteReceiveStream(process.stdout)
        async with to_session:  # closing it ends every pending request of the session
            while True:
                try:
                    line = await lines.receive_until(b"\n", limit)
                except anyio.DelimiterNotFound:
                    overran()
                    _kill_group(process)  # it would block writing the rest; no need to read it
                    return
                except (anyio.IncompleteRead, anyio.EndOfStream, anyio.ClosedResourceError,
                        anyio.BrokenResourceError, OSError):
                    return
                if not line.strip():
                    continue
                try:
                    message: SessionMessage | Exception = SessionMessage(
                        jsonrpc_message_adapter.validate_json(line, by_name=False))
                except ValueError as exc:
                    message = exc  # the session reports a line that is not a message
                try:
                    await to_session.send(message)
                except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                    return

    async def write_messages() -> None:
        assert process.stdin is not None
        async with from_session:
            async for outgoing in from_session:
                data = outgoing.message.model_dump_json(by_alias=True, exclude_unset=True)
                try:
                    await process.stdin.send((data + "\n").encode())
                except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
                    await to_session.aclose()  # the server is gone: end its pending requests
                    return

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read_lines)
            tasks.start_soon(write_messages)
            try:
                yield read_stream, write_stream
            finally:
                tasks.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):  # a cancelled caller must not leak the server
            await _stop(process)
            for stream in (read_stream, write_stream, to_session, from_session):
                await stream.aclose()


async def _stop(process: Process) -> None:
    """Close the server's stdin, give it a moment to end, then end its whole group."""
    if process.stdin is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await process.stdin.aclose()
    with anyio.move_on_after(EXIT_GRACE):
        if process.stdout is not None:  # drained, so a server still writing can end
            with suppress(anyio.EndOfStream, anyio.ClosedResourceError,
                          anyio.BrokenResourceError, OSError):
                while True:
                    await process.stdout.receive()
        await process.wait()
    if process.returncode is None:
        await terminate_posix_process_tree(process, EXIT_GRACE)
    with anyio.move_on_after(EXIT_GRACE):
        await process.wait()
    await process.aclose()


def _kill_group(process: Process) -> None:
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


class CappedJson(httpx2.AsyncByteStream):
    """A JSON answer read whole up to ``limit`` bytes; past that, what the SDK gets instead is a
    JSON-RPC error for the same request (a body cut short would be logged with a traceback)."""

    def __init__(self, body: Any, limit: int, request_id: Any, overran: Overran) -> None:
        self.body = body
        self.limit = limit
        self.request_id = request_id
        self.overran = overran

    async def __aiter__(self) -> AsyncIterator[bytes]:
        kept = bytearray()
        async for chunk in self.body:
            kept += chunk
            if len(kept) > self.limit:
                self.overran()
                yield json.dumps({"jsonrpc": "2.0", "id": self.request_id, "error": {
                    "code": INTERNAL_ERROR, "message": "the answer was too long"}}).encode()
                return
        yield bytes(kept)

    async def aclose(self) -> None:
        await self.body.aclose()


class CappedEvents(httpx2.AsyncByteStream):
    """A stream of server-sent events that stops once one event went past ``limit`` bytes."""

    def __init__(self, body: Any, limit: int, overran: Overran) -> None:
        self.body = body
        self.limit = limit
        self.overran = overran

    async def __aiter__(self) -> AsyncIterator[bytes]:
        since_event = 0  # bytes since the last blank line, which ends an event
        async for chunk in self.body:
            ends = max(chunk.rfind(b"\n\n"), chunk.rfind(b"\r\n\r\n"), chunk.rfind(b"\r\r"))
            since_event = len(chunk) - ends if ends >= 0 else since_event + len(chunk)
            if since_event > self.limit:
                self.overran()
                raise httpx2.StreamError(f"an event went past {self.limit:,} bytes")
            yield chunk

    async def aclose(self) -> None:
        await self.body.aclose()


def capped_http_client(headers: Mapping[str, str], limit: int,
                       overran: Overran) -> httpx2.AsyncClient:
    """The SDK's HTTP client for MCP, each answer to a request read at most ``limit`` bytes."""
    client = create_mcp_http_client(headers=dict(headers) or None)

    async def cap(response: httpx2.Response) -> None:
        if response.request.method != "POST":  # the GET stream only notifies (SDK-bounded)
            return
        kind = response.headers.get("content-type", "").lower()
        if kind.startswith("application/json"):
            response.stream = CappedJson(response.stream, limit,
                                         _request_id(response.request), overran)
        elif kind.startswith("text/event-stream"):
            response.stream = CappedEvents(response.stream, limit, overran)

    client.event_hooks["response"].append(cap)
    return client


def _request_id(request: httpx2.Request) -> Any:
    """The JSON-RPC id of the message a POST carried (None when it has none)."""
    try:
        sent = json.loads(request.content)
    except ValueError:
        return None
    return sent.get("id") if isinstance(sent, dict) else None

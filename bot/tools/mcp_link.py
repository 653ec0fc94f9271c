"""One MCP server's connection: held open by a task of its own, opened again after a failure.

The SDK's ``Client`` is an async context manager built on anyio task groups, which must be
entered and left by the same task: ``ServerLink`` keeps each connection in a task of its own,
and a call from any task goes through the session it holds. A link whose call failed for any
reason but the tool's own answer is closed and opened again on next use (a server that died).
An answer is read at most ``ANSWER_BYTES`` (``bot.tools.mcp_transport`` stops it while it
arrives); one that goes past is ``AnswerTooLong`` and the link is closed. Env values and
header values are hidden (``hide``) from everything said about the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path
from typing import Any, TextIO

from bot.tools.mcp_config import ServerConfig, tool_prefix

ANSWER_BYTES = 1_000_000  # what one answer may be as read (its text is then cut to
# bot.tools.mcp_client's OUTPUT_CHARS)


class ServerUnavailable(Exception):
    """The server could not be started or reached (the reason says why, secrets hidden)."""


class AnswerTooLong(Exception):
    """The server's answer went past ``ANSWER_BYTES``; it was not read to its end."""


class ServerLink:
    """One server's connection, held open by its own task; opened again after a failure."""

    def __init__(self, config: ServerConfig, timeout: float, log_dir: Path | None) -> None:
        self.config = config
        self.timeout = timeout
        self.log_dir = log_dir
        self._client: Any = None
        self._holder: asyncio.Task[None] | None = None
        self._stop: asyncio.Event | None = None
        self._opening: asyncio.Lock = asyncio.Lock()
        self._errlog: TextIO | None = None
        self.overran = False  # an answer went past ANSWER_BYTES since the last call began

    def hide(self, text: str) -> str:
        """``text`` with the server's env values and header values replaced."""
        for secret in self.config.secrets():
            text = text.replace(secret, "[secret]")
        return text

    async def tools(self) -> list[Any]:
        """Every tool the server lists (all pages), opening the connection if needed."""
        client = await self._open()
        found: list[Any] = []
        cursor: str | None = None
        async with asyncio.timeout(self.timeout):
            while True:
                page = await client.list_tools(cursor=cursor)
                found.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return found

    async def call(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call one tool; any failure but the tool's own error result closes the link, and
        an answer past ``ANSWER_BYTES`` closes it too (``AnswerTooLong``)."""
        client = await self._open()
        self.overran = False
        try:
            async with asyncio.timeout(self.timeout):
                result = await client.call_tool(tool, arguments)
        except TimeoutError:
            if self.overran:
                await self.close()
                raise AnswerTooLong from None
            raise  # a slow tool is not a dead server: the link stays
        except Exception as exc:
            await self.close()
            if self.overran:
                raise AnswerTooLong from exc
            raise
        if self.overran:  # a server may answer again after the cut: the link is not trusted
            await self.close()
            raise AnswerTooLong
        return result

    def _overran(self) -> None:
        self.overran = True

    async def _open(self) -> Any:
        async with self._opening:
            if self._client is not None and self._holder is not None \
                    and not self._holder.done():
                return self._client
            await self.close()
            ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._holder = asyncio.create_task(self._hold(ready, self._stop),
                                               name=f"mcp:{self.config.name}")
            try:
                async with asyncio.timeout(self.timeout):
                    self._client = await asyncio.shield(ready)
            except BaseException:
                # Nobody waits for it any more: cancelled, the holder leaves it alone instead
                # of setting an exception no one retrieves.
                ready.cancel()
                await self.close(at_once=True)
                raise
            return self._client

    async def _hold(self, ready: asyncio.Future[Any], stop: asyncio.Event) -> None:
        """The connection's task: enter the SDK's client, hand it out, leave it on stop."""
        from mcp import Client  # the SDK is imported only when a server is configured

        try:
            async with Client(self._transport()) as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(ServerUnavailable(self.hide(reason(exc))))
            if not isinstance(exc, Exception):
                raise

    def _transport(self) -> Any:
        from mcp.client.streamable_http import streamable_http_client

        from bot.tools.mcp_transport import capped_http_client, capped_stdio

        config = self.config
        if config.command:
            return capped_stdio(config.command, config.args, config.env, self._server_log(),
                                ANSWER_BYTES, self._overran)
        http = capped_http_client(config.headers, ANSWER_BYTES, self._overran)
        return streamable_http_client(str(config.url), http_client=http,
                                      max_sse_event_size=ANSWER_BYTES)

    def _server_log(self) -> TextIO:
        """Where a stdio server's own stderr goes: a file in the home, not our console."""
        if self._errlog is None:
            if self.log_dir is None:
                self._errlog = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
            else:
                self.log_dir.mkdir(parents=True, exist_ok=True)
                path = server_log_path(self.log_dir, self.config.name)
                self._errlog = open(path, "a", encoding="utf-8")  # noqa: SIM115
        return self._errlog

    async def close(self, *, at_once: bool = False) -> None:
        """Leave the connection (a stdio server's process ends with it); ``at_once``: a
        connection still opening is not waited for."""
        holder = self._holder
        self._holder = None
        self._client = None
        if self._stop is not None:
            self._stop.set()
        if holder is not None and not holder.done():
            try:
                if at_once:
                    raise TimeoutError
                async with asyncio.timeout(5):
                    await asyncio.shield(holder)
            except (TimeoutError, Exception):
                holder.cancel()
                with contextlib.suppress(BaseException):
                    await holder

    def shutdown(self) -> None:
        if self._errlog is not None:
            self._errlog.close()
            self._errlog = None


def server_log_path(log_dir: Path, server: str) -> Path:
    """The file a stdio server's own stderr goes to."""
    return log_dir / f"mcp-{tool_prefix(server)}.log"


def reason(exc: BaseException) -> str:
    """A one-line reason, digging into the exception groups anyio raises."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def connection_closed(exc: Exception) -> bool:
    """The SDK's error for a connection that ended (the server process died)."""
    from mcp_types import CONNECTION_CLOSED

    return getattr(exc, "code", None) == CONNECTION_CLOSED or (
        getattr(getattr(exc, "error", None), "code", None) == CONNECTION_CLOSED)

"""A streamable-HTTP MCP server built with the SDK's ``MCPServer``, on loopback, in a thread.

Usage::

    with McpHttpServer() as server:
        config = {"mcpServers": {"docs": {"url": server.url,
                                          "headers": {"Authorization": "Bearer s3cret"}}}}
        ...
        assert server.headers_seen[-1]["authorization"] == "Bearer s3cret"

Its tools: ``echo`` (read-only), ``big_output`` (read-only, ``size`` characters), ``slow``
(read-only, answers once ``release`` is set or never), and ``add_note`` (has a side effect:
it appends to ``notes``).
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)


class McpHttpServer:
    """The SDK's own server over streamable HTTP on 127.0.0.1, a free port."""

    def __init__(self) -> None:
        self.notes: list[str] = []
        self.headers_seen: list[dict[str, str]] = []
        self.release = threading.Event()
        self._sock = socket.socket()
        self._sock.bind(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def build(self) -> Any:
        mcp = MCPServer("docs")

        @mcp.tool(annotations=READ_ONLY)
        def echo(text: str) -> str:
            """Say the text back."""
            return text

        @mcp.tool(annotations=READ_ONLY)
        def big_output(size: int) -> str:
            """Return size characters."""
            return "x" * size

        @mcp.tool(annotations=READ_ONLY)
        async def slow() -> str:
            """Answer once released."""
            while not self.release.is_set():
                await asyncio.sleep(0.02)
            return "finally"

        @mcp.tool()
        def add_note(text: str) -> str:
            """Append a note (a side effect)."""
            self.notes.append(text)
            return f"noted ({len(self.notes)})"

        app = mcp.streamable_http_app()
        seen = self.headers_seen

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                seen.append({k.decode().lower(): v.decode() for k, v in scope["headers"]})
            await app(scope, receive, send)

        return recording

    def __enter__(self) -> McpHttpServer:
        config = uvicorn.Config(self.build(), log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=asyncio.run,
                                        args=(self._server.serve(sockets=[self._sock]),),
                                        daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 15
        while not self._server.started:  # polled, with a deadline
            assert self._thread.is_alive() and time.monotonic() < deadline, "no MCP server"
            self._thread.join(0.01)
        return self

    def __exit__(self, *_: Any) -> None:
        self.release.set()
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)

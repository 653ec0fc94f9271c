"""A stdio MCP server (the SDK's ``MCPServer``) that answers too much or not at all.

Its tools: ``huge`` (``size`` characters in one answer), ``echo`` and ``mute`` (never answers).
Each process writes its pid to the file named by ``HOSTILE_PIDS`` when it starts, so a test can
tell a restarted server from the first one.
"""

from __future__ import annotations

import asyncio
import os

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations

READ_ONLY = ToolAnnotations(read_only_hint=True)
server = MCPServer("hostile")


@server.tool(annotations=READ_ONLY)
def huge(size: int) -> str:
    """Return size characters."""
    return "x" * size


@server.tool(annotations=READ_ONLY)
def echo(text: str) -> str:
    """Say the text back."""
    return text


@server.tool(annotations=READ_ONLY)
async def mute() -> str:
    """Never answer."""
    await asyncio.Event().wait()
    return "never"


if __name__ == "__main__":
    with open(os.environ["HOSTILE_PIDS"], "a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    server.run()

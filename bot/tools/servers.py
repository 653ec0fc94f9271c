"""The MCP servers as the bot runs them: loaded only when a servers file is configured.

Without FRONTDESK_MCP_CONFIG or ``mcp.json`` in the home, starting does nothing and the MCP
client (and its SDK) is never imported; with one, the servers start before the first run may
call one of their tools, and those tools join the registry.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bot.tools.mcp_config import config_path
from bot.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from bot.tools.mcp_client import McpTools


class McpServers:
    """The configured MCP servers of one process: built when first asked for, started once."""

    def __init__(self, configured: str | None, home: Path, timeout: float,
                 registry: ToolRegistry) -> None:
        self.configured = configured
        self.home = home
        self.timeout = timeout
        self.registry = registry  # where their tools are registered
        self._tools: McpTools | None = None

    @property
    def configured_file(self) -> Path | None:
        """The servers file in use, if any."""
        return config_path(self.configured, self.home)

    @property
    def tools(self) -> McpTools:
        """The servers (not started), built on first use."""
        if self._tools is None:
            from bot.tools.mcp_client import build_mcp

            self._tools = build_mcp(self.configured, self.home, self.timeout)
        return self._tools

    async def start(self) -> None:
        """Start the servers and register their tools (a failing one is a log line)."""
        if self._tools is not None or self.configured_file is not None:
            await self.tools.start(self.registry)

    async def stop(self) -> None:
        """Stop the servers that were started (stdio servers end)."""
        if self._tools is not None:
            await self._tools.stop()

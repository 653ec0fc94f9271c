"""The tools concern, built: the assistant's own tools and the configured MCP servers' tools.

``build`` is what the assembler (``bot.app``) calls. The MCP servers start with the gateway
(``McpServers.start``) and register their tools into the same registry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from bot.calendar.events import EventSource
from bot.config.settings import Settings
from bot.tools.builtin import build_tools
from bot.tools.registry import Caller, ToolRegistry
from bot.tools.servers import McpServers
from memory.notes import Memory


@dataclass(frozen=True)
class Tools:
    """Every tool a model may call, and the MCP servers that add some of them."""

    registry: ToolRegistry
    mcp: McpServers


def build(settings: Settings, memory: Memory, calendar: EventSource | None,
          notify: Callable[[Caller, str], Awaitable[str]]) -> Tools:
    """The four built-in tools bound to these services (``notify``: pass an urgent message
    on to the owner), and the MCP servers of ``FRONTDESK_MCP_CONFIG``."""
    registry = build_tools(memory, calendar, notify)
    return Tools(registry, McpServers(settings.mcp_config, settings.home, settings.mcp_timeout,
                                      registry))

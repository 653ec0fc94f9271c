"""`frontdesk tools [--json]`: every tool (built-in and MCP), its server, who may use it and
whether a call waits for the owner's approval.

MCP servers are started to list their tools and stopped again; one that does not start is a
line on stderr and its tools are absent. ``--json`` prints a list of ``{"name", "server",
"tool", "users", "needs_approval"}`` (``server`` null for built-ins).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from bot.app import assemble
from bot.config.settings import Settings
from bot.config.text import shown
from bot.tools.registry import ToolInfo


async def list_tools(settings: Settings) -> tuple[list[ToolInfo], list[str]]:
    """Every tool the bot would offer, and a line per MCP problem."""
    app = assemble(settings)
    try:
        await app.tools.mcp.tools.start(app.tools.registry, log_problems=False)
    finally:
        await app.tools.mcp.stop()
    return app.tools.registry.listing(), app.tools.mcp.tools.problem_lines()


def as_json(tool: ToolInfo) -> dict[str, Any]:
    return {"name": tool.name, "server": tool.server, "tool": tool.tool, "users": tool.users,
            "needs_approval": tool.needs_approval}


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the tools; exit 0 even when a server is down (its line on stderr says so)."""
    tools, problems = asyncio.run(list_tools(settings))
    for line in problems:
        print(f"frontdesk: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps([as_json(tool) for tool in tools], ensure_ascii=False))
        return 0
    rows = [("TOOL", "SERVER", "USERS", "APPROVAL")] + [
        (t.name, t.server or "(built-in)", t.users,
         "asks the owner" if t.needs_approval else "runs freely") for t in tools]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    for row in rows:
        line = "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=False))
        print(shown(line + "  " + row[3], "terminal"))  # names and descriptions are the servers'

    return 0

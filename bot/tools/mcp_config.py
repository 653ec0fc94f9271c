"""The MCP servers file (``FRONTDESK_MCP_CONFIG``): which servers to start and the owner's policy.

The format is the one other MCP clients read (``{"mcpServers": {name: {...}}}``): a stdio
server has ``command`` (with ``args`` and ``env``), a streamable-HTTP server has ``url`` (with
``headers``). Frontdesk adds an optional ``frontdesk`` block per server: ``trust`` (tools that
run without asking), ``approve`` (tools that always ask, whatever their annotations say) and
``guests`` (tools other allowlisted people may use). A server entry that does not fit is
skipped with a reason (``McpConfig.problems``); the rest still load.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

NAME_LIMIT = 64  # what both providers accept for a tool name
UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


class McpConfigError(ValueError):
    """The file as a whole cannot be read (missing, not JSON, no ``mcpServers`` object)."""


@dataclass(frozen=True)
class ServerConfig:
    """One server: how to reach it and the owner's policy for its tools."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    trust: frozenset[str] = frozenset()
    approve: frozenset[str] = frozenset()
    guests: frozenset[str] = frozenset()

    def secrets(self) -> list[str]:
        """Env values and header values: never shown in logs, traces or errors."""
        return [v for v in (*self.env.values(), *self.headers.values()) if len(v) >= 4]

    def needs_approval(self, tool: str, read_only: bool) -> bool:
        """The policy: read-only or trusted tools run freely, unless listed in ``approve``."""
        return tool in self.approve or not (read_only or tool in self.trust)


@dataclass(frozen=True)
class McpConfig:
    """The servers that loaded, and a line for each entry that did not."""

    path: Path | None = None
    servers: tuple[ServerConfig, ...] = ()
    problems: tuple[str, ...] = ()


def config_path(configured: str | None, home: Path) -> Path | None:
    """FRONTDESK_MCP_CONFIG, else ``mcp.json`` in the home when it exists, else None."""
    if configured:
        return Path(configured).expanduser()
    default = home / "mcp.json"
    return default if default.is_file() else None


def load_config(path: Path | None) -> McpConfig:
    """Read the servers file; an unreadable file is a McpConfigError naming it."""
    if path is None:
        return McpConfig()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise McpConfigError(f"FRONTDESK_MCP_CONFIG: there is no file {path}") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise McpConfigError(f"FRONTDESK_MCP_CONFIG: {path} is not a readable JSON file "
                             f"({exc})") from None
    entries = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(entries, dict):
        raise McpConfigError(f"FRONTDESK_MCP_CONFIG: {path} has no \"mcpServers\" object")
    servers: list[ServerConfig] = []
    problems: list[str] = []
    for name, entry in entries.items():
        try:
            servers.append(parse_server(str(name), entry))
        except ValueError as bad:
            problems.append(f"MCP server {name!r} in {path} is skipped: {bad}")
    return McpConfig(path, tuple(servers), tuple(problems))


def parse_server(name: str, entry: Any) -> ServerConfig:
    """One ``mcpServers`` entry; a ValueError saying what is wrong with it."""
    if not isinstance(entry, dict):
        raise ValueError("expected an object with \"command\" or \"url\"")
    if not tool_prefix(name):
        raise ValueError("its name needs letters or digits")
    command, url = entry.get("command"), entry.get("url")
    if bool(command) == bool(url):
        raise ValueError("expected exactly one of \"command\" (stdio) or \"url\" (HTTP)")
    if command is not None and not isinstance(command, str):
        raise ValueError("\"command\" must be a string")
    if url is not None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ValueError("\"url\" must be an http:// or https:// address")
    policy = entry.get("frontdesk") or {}
    if not isinstance(policy, dict):
        raise ValueError("\"frontdesk\" must be an object with trust / approve / guests lists")
    return ServerConfig(
        name=name, command=command, args=tuple(_strings(entry, "args")),
        env=_mapping(entry, "env"), url=url, headers=_headers(entry),
        trust=frozenset(_strings(policy, "trust")),
        approve=frozenset(_strings(policy, "approve")),
        guests=frozenset(_strings(policy, "guests")))


def _strings(entry: dict[str, Any], key: str) -> list[str]:
    value = entry.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"\"{key}\" must be a list of strings")
    return list(value)


def _mapping(entry: dict[str, Any], key: str) -> dict[str, str]:
    value = entry.get(key) or {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"\"{key}\" must be an object of strings")
    return {str(k): v for k, v in value.items()}


def _headers(entry: dict[str, Any]) -> dict[str, str]:
    headers = _mapping(entry, "headers")
    if not all(f"{k}{v}".isascii() for k, v in headers.items()):
        raise ValueError("\"headers\" must be plain ASCII text (HTTP sends nothing else)")
    return headers


def tool_prefix(server: str) -> str:
    """The server's name as it starts its tools' names (characters both providers accept)."""
    return UNSAFE.sub("_", server).strip("_")


def offered_name(server: str, tool: str) -> str:
    """``<server>__<tool>``, the name the model sees (cut to the providers' limit)."""
    return f"{tool_prefix(server)}__{UNSAFE.sub('_', tool)}"[:NAME_LIMIT]

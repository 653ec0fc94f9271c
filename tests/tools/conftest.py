"""Fixtures for the MCP tests: real reference servers (stdio), a temporary git repository, a
servers file, and the gateway harness of ``tests.support.harness`` with MCP configured.

The reference servers are the ``mcp-server-time`` and ``mcp-server-git`` executables installed
next to this Python (the dev extras), found through ``sys.executable``, not PATH.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, assemble
from bot.models import Models
from tests.support.harness import Harness, PurposeModel, RecordingAdapter, make_settings

BIN = Path(sys.executable).parent


def server_bin(name: str) -> str:
    """The path of a reference server's executable in this virtualenv."""
    path = BIN / name
    if not path.exists():
        pytest.skip(f"{name} is not installed (pip install -e '.[dev]')")
    return str(path)


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout


def commits(repo: Path) -> int:
    """How many commits the repository has."""
    return int(git(repo, "rev-list", "--count", "HEAD").strip())


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit and one staged, uncommitted file."""
    path = tmp_path / "notes-repo"
    path.mkdir()
    git(path, "init", "-q")
    git(path, "config", "user.email", "owner@example.org")
    git(path, "config", "user.name", "Owner")
    (path / "a.txt").write_text("first\n")
    git(path, "add", "a.txt")
    git(path, "commit", "-q", "-m", "first")
    (path / "b.txt").write_text("second\n")
    git(path, "add", "b.txt")
    return path


def write_config(home: Path, servers: dict[str, Any]) -> Path:
    """``home/mcp.json`` with these servers (the default place, so no variable is needed)."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def git_server(repo: Path, **policy: list[str]) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": server_bin("mcp-server-git"),
                             "args": ["--repository", str(repo)]}
    if policy:
        entry["frontdesk"] = policy
    return entry


def time_server() -> dict[str, Any]:
    return {"command": server_bin("mcp-server-time"), "args": ["--local-timezone", "UTC"]}


McpHarnessFactory = Callable[..., Awaitable[Harness]]


@pytest.fixture
async def mcp_harness(home: Path) -> Any:
    """Build started harnesses (their MCP servers stopped at the end): ``await
    mcp_harness(servers, **env)``; graph mode is off unless ``FRONTDESK_GRAPH_WORKFLOWS``."""
    built: list[App] = []

    async def build(servers: dict[str, Any] | None = None, **env: str) -> Harness:
        if servers is not None:
            write_config(home, servers)
        small, big = PurposeModel("small"), PurposeModel("big")
        env = {"FRONTDESK_GRAPH_WORKFLOWS": "0", **env}
        services = assemble(make_settings(home, **env),
                                          models=Models(small=small, big=big))
        built.append(services)
        gateway = services.chat.gateway
        await gateway.start()
        adapter = RecordingAdapter()
        await gateway.attach(adapter)
        return Harness(services, gateway, adapter, small, big)

    yield build
    for services in built:
        await services.tools.mcp.stop()

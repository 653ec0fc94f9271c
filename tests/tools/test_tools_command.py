"""`frontdesk tools [--json]`, the servers file and the two variables."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.models.base import ToolSpec
from bot.tools.mcp_client import check_servers
from bot.tools.mcp_config import McpConfigError, config_path, load_config, offered_name
from bot.tools.registry import Caller, ToolRegistry, ToolResult
from tests.tools.conftest import git_server, time_server, write_config


def frontdesk(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args], capture_output=True,
                          text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "FRONTDESK_HOME": str(home), **env})


def test_tools_json_lists_builtins_and_mcp_tools_with_their_policy(tmp_path: Path,
                                                                   repo: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"git": git_server(repo, guests=["git_status"]), "time": time_server(),
                        "down": {"command": str(tmp_path / "missing")}})
    done = frontdesk(home, "tools", "--json")
    assert done.returncode == 0, done.stderr
    tools = {t["name"]: t for t in json.loads(done.stdout)}
    assert tools["remember"] == {"name": "remember", "server": None, "tool": "remember",
                                 "users": "owner+guests", "needs_approval": False}
    assert tools["git__git_commit"] == {"name": "git__git_commit", "server": "git",
                                        "tool": "git_commit", "users": "owner",
                                        "needs_approval": True}
    assert tools["git__git_status"]["users"] == "owner+guests"
    assert tools["git__git_status"]["needs_approval"] is False
    assert tools["time__convert_time"]["needs_approval"] is False
    assert not any(t["server"] == "down" for t in tools.values())
    assert done.stderr.count("'down' did not start") == 1


def test_tools_table_without_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_config(home, {"time": time_server()})
    done = frontdesk(home, "tools")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["TOOL", "SERVER", "USERS", "APPROVAL"]
    assert any(line.split()[:3] == ["time__get_current_time", "time", "owner"]
               for line in lines)


def test_an_unreadable_servers_file_is_a_line_not_a_crash(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "mcp.json").write_text("{not json", encoding="utf-8")
    done = frontdesk(home, "tools", "--json")
    assert done.returncode == 0 and "not a readable JSON file" in done.stderr
    assert all(t["server"] is None for t in json.loads(done.stdout))


def test_the_servers_file_and_its_entries(tmp_path: Path) -> None:
    assert config_path(None, tmp_path) is None  # no mcp.json: no servers
    (tmp_path / "mcp.json").write_text("{}")
    assert config_path(None, tmp_path) == tmp_path / "mcp.json"
    assert config_path("~/x.json", tmp_path) == Path("~/x.json").expanduser()
    with pytest.raises(McpConfigError, match="mcpServers"):
        load_config(tmp_path / "mcp.json")
    with pytest.raises(McpConfigError, match="there is no file"):
        load_config(tmp_path / "missing.json")
    path = write_config(tmp_path / "h", {
        "ok": {"command": "x", "args": ["a"], "frontdesk": {"trust": ["t"]}},
        "both": {"command": "x", "url": "http://h/mcp"}, "neither": {},
        "badlist": {"command": "x", "args": "a"}, "web": {"url": "https://h/mcp"}})
    config = load_config(path)
    assert [s.name for s in config.servers] == ["ok", "web"]
    assert len(config.problems) == 3 and all("is skipped" in p for p in config.problems)
    assert offered_name("my docs!", "get.page") == "my_docs__get_page"
    assert len(offered_name("s" * 50, "t" * 50)) == 64


def test_the_variables_are_checked() -> None:
    settings = Settings.from_env({"FRONTDESK_MCP_CONFIG": "/etc/frontdesk/mcp.json",
                                  "FRONTDESK_MCP_TIMEOUT": "12.5"})
    assert settings.mcp_config == "/etc/frontdesk/mcp.json" and settings.mcp_timeout == 12.5
    assert Settings.from_env({}).mcp_timeout == 30.0
    with pytest.raises(ValueError, match="FRONTDESK_MCP_TIMEOUT='soon'"):
        Settings.from_env({"FRONTDESK_MCP_TIMEOUT": "soon"})


async def test_check_servers_reports_each_server(tmp_path: Path) -> None:
    write_config(tmp_path, {"time": time_server(), "down": {"command": str(tmp_path / "x")}})
    statuses, problems = await check_servers(None, tmp_path, 30.0)
    by_name = {s.name: s for s in statuses}
    assert by_name["time"].ok and "time__get_current_time" in by_name["time"].tools
    assert not by_name["down"].ok and "FileNotFoundError" in by_name["down"].problem
    assert problems == []


async def test_a_remote_tool_that_raises_is_an_observation() -> None:
    registry = ToolRegistry()

    async def broken(arguments: dict[str, object]) -> ToolResult:
        raise RuntimeError("boom")

    registry.add_remote(ToolSpec("s__t", "t", {"type": "object"}), broken, server="s",
                        remote_name="t", guests=False, needs_approval=False)
    owner = Caller("owner", True, "console", "c")
    outcome = await registry.invoke("s__t", {}, owner)
    assert not outcome.ok and "RuntimeError" in outcome.text
    guest = await registry.invoke("s__t", {}, Caller("telegram:2", False, "telegram", "c"))
    assert not guest.valid and "only available to the owner" in guest.text


async def test_an_approval_tool_outside_a_message_run_is_not_run() -> None:
    from bot.tools.loop import run_loop
    from tests.fakes.model import FakeModel

    ran: list[dict[str, object]] = []

    async def effect(arguments: dict[str, object]) -> ToolResult:
        ran.append(arguments)
        return ToolResult("done", True)

    registry = ToolRegistry()
    registry.add_remote(ToolSpec("s__write", "w", {"type": "object"}), effect, server="s",
                        remote_name="write", guests=False, needs_approval=True)
    model = FakeModel(role="big")
    model.enqueue(tool_calls=[("s__write", {"x": 1})])
    model.enqueue("ok")
    result = await run_loop(model, [{"role": "user", "content": "go"}], registry,
                            Caller("owner", True, "console", "c"))
    assert result.text == "ok" and ran == []
    assert "cannot be asked here" in model.history[1].messages[-1].content

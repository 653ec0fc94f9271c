"""MCP servers as the bot meets them: the time server (stdio), the SDK's own server over
streamable HTTP, servers that fail, die or are slow, and output that is too long."""

from __future__ import annotations

import json
import logging
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.tools.mcp_client import OUTPUT_CHARS
from tests.fakes.mcp_http import McpHttpServer
from tests.support.harness import OWNER
from tests.tools.conftest import McpHarnessFactory, time_server

SECRET = "Bearer s3cret-header-value"


@pytest.fixture
def http_server() -> Iterator[McpHttpServer]:
    with McpHttpServer() as server:
        yield server


def docs_server(server: McpHttpServer) -> dict[str, object]:
    return {"url": server.url, "headers": {"Authorization": SECRET}}


def children(command: str = "mcp-server-time") -> list[int]:
    """The pids of this process's live child processes running ``command``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if int(stat[1]) == os.getpid() and stat[0] != "Z" and command.encode() in cmdline:
                found.append(int(entry))
    return found


async def test_time_server_tools_run_freely(mcp_harness: McpHarnessFactory) -> None:
    h = await mcp_harness({"time": time_server()})
    h.big.enqueue(tool_calls=[("time__get_current_time", {"timezone": "Europe/Berlin"})])
    h.big.enqueue("It is evening in Berlin.")
    reply = await h.send("what time is it in Berlin?")
    assert reply.text == "It is evening in Berlin." and not reply.buttons
    observation = h.big.history[1].messages[-1].content
    assert '"timezone": "Europe/Berlin"' in observation
    offered = {spec.name for spec in h.big.history[0].tools or []}
    assert {"time__get_current_time", "time__convert_time", "remember"} <= offered


async def test_streamable_http_server_with_headers_and_approval(
        mcp_harness: McpHarnessFactory, http_server: McpHttpServer,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    h = await mcp_harness({"docs": docs_server(http_server)})
    assert any(seen.get("authorization") == SECRET for seen in http_server.headers_seen)
    h.big.enqueue(tool_calls=[("docs__echo", {"text": "hello"})])
    h.big.enqueue(tool_calls=[("docs__add_note", {"text": "buy milk"})])
    h.big.enqueue("Noted.")
    reply = await h.send("echo hello, then note buy milk")
    assert "add_note" in reply.text and http_server.notes == []
    assert "hello" in h.big.history[1].messages[-1].content
    approve = next(b for b in reply.buttons if b.label == "Approve")
    assert (await h.gateway.press("telegram", OWNER, approve.token)).accepted
    assert http_server.notes == ["buy milk"] and h.adapter.to(OWNER)[-1] == "Noted."
    stored = json.dumps(h.services.flows.store.events(reply.run_id or ""))
    assert SECRET not in stored and SECRET not in caplog.text


async def test_long_output_is_cut_and_says_so(mcp_harness: McpHarnessFactory,
                                              http_server: McpHttpServer) -> None:
    h = await mcp_harness({"docs": docs_server(http_server)})
    h.big.enqueue(tool_calls=[("docs__big_output", {"size": 50_000})])
    h.big.enqueue("That was long.")
    await h.send("give me a lot")
    observation = h.big.history[1].messages[-1].content
    assert "only the first 16,000 are shown" in observation and "50,000" in observation
    assert OUTPUT_CHARS <= len(observation) < OUTPUT_CHARS + 500


async def test_a_slow_call_times_out_as_an_observation(mcp_harness: McpHarnessFactory,
                                                       http_server: McpHttpServer) -> None:
    h = await mcp_harness({"docs": docs_server(http_server)}, FRONTDESK_MCP_TIMEOUT="0.5")
    h.big.enqueue(tool_calls=[("docs__slow", {})])
    h.big.enqueue(tool_calls=[("docs__echo", {"text": "still here"})])
    h.big.enqueue("The slow one timed out.")
    reply = await h.send("try the slow tool")
    assert reply.text == "The slow one timed out."
    assert "did not answer within 0.5 s" in h.big.history[1].messages[-1].content
    assert "still here" in h.big.history[2].messages[-1].content  # the server is still used


async def test_a_failing_server_is_one_log_line_and_the_rest_works(
        mcp_harness: McpHarnessFactory, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    h = await mcp_harness({"time": time_server(),
                           "broken": {"command": str(tmp_path / "no-such-server"),
                                      "env": {"API_TOKEN": "env-secret-123"}},
                           "odd": {"url": "ftp://example.org"}})
    lines = [r.getMessage() for r in caplog.records if r.name == "bot.tools.mcp_client"]
    assert len([line for line in lines if "'broken'" in line]) == 1
    assert len([line for line in lines if "'odd'" in line]) == 1
    assert "env-secret-123" not in caplog.text
    names = h.services.tools.registry.names()
    assert "time__get_current_time" in names and not any(n.startswith("broken__")
                                                          for n in names)
    h.big.enqueue("Still fine.")
    assert (await h.send("hello there, anything new?")).text == "Still fine."


async def test_a_server_that_died_is_started_again_on_next_use(
        mcp_harness: McpHarnessFactory) -> None:
    h = await mcp_harness({"time": time_server()})
    (first,) = children()
    os.kill(first, signal.SIGKILL)
    h.big.enqueue(tool_calls=[("time__get_current_time", {"timezone": "UTC"})])
    h.big.enqueue("Done.")
    await h.send("what time is it in UTC?")
    assert '"timezone": "UTC"' in h.big.history[1].messages[-1].content
    assert children() and first not in children()

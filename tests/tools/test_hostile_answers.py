"""Servers that answer too much or never: an answer past the cap is stopped while it arrives
and its server restarted for the next call; a server that never answers is one line."""

from __future__ import annotations

import gc
import logging
import resource
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.tools.mcp_client import ANSWER_BYTES
from tests.fakes.mcp_http import McpHttpServer
from tests.support.harness import Harness
from tests.tools.conftest import McpHarnessFactory

SERVER = str(Path(__file__).with_name("hostile_server.py"))
HUGE = 50_000_000  # characters in the hostile answer: fifty times the cap
CUT = f"was longer than {ANSWER_BYTES:,} bytes; none of it is shown"


def hostile_server(pids: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [SERVER], "env": {"HOSTILE_PIDS": str(pids)}}


def started(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def huge_then_echo(h: Harness, server: str, huge_tool: str, size_arg: str) -> list[str]:
    """Ask for the huge answer, then an echo: the two observations the model saw."""
    h.big.enqueue(tool_calls=[(f"{server}__{huge_tool}", {size_arg: HUGE})])
    h.big.enqueue(tool_calls=[(f"{server}__echo", {"text": "still here"})])
    h.big.enqueue("Done.")
    reply = await h.send("give me everything, then say still here")
    assert reply.text == "Done."
    return [h.big.history[1].messages[-1].content, h.big.history[2].messages[-1].content]


async def test_a_huge_stdio_answer_is_stopped_while_read_and_the_server_restarted(
        mcp_harness: McpHarnessFactory, tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    h = await mcp_harness({"hostile": hostile_server(pids)}, FRONTDESK_MCP_TIMEOUT="60")
    (first,) = started(pids)
    before = peak_mb()
    cut, echoed = await huge_then_echo(h, "hostile", "huge", "size")
    assert CUT in cut and "xxxx" not in cut
    assert "still here" in echoed  # answered at once, by a fresh server
    assert not alive(first) and len(started(pids)) == 2 and alive(started(pids)[1])
    # read as a whole, the answer alone would take 50 MB (and its JSON parse far more)
    assert peak_mb() - before < 30


@pytest.fixture
def http_server() -> Iterator[McpHttpServer]:
    with McpHttpServer() as server:
        yield server


async def test_a_huge_http_answer_is_stopped_while_read_and_the_next_call_works(
        mcp_harness: McpHarnessFactory, http_server: McpHttpServer,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    h = await mcp_harness({"docs": {"url": http_server.url}}, FRONTDESK_MCP_TIMEOUT="60")
    cut, echoed = await huge_then_echo(h, "docs", "big_output", "size")
    # read whole, it would have been cut to "the output had 50,000,000 characters" (this
    # server runs in our process, so its own copy of the answer rules out a memory check)
    assert CUT in cut and "50,000,000" not in cut and "still here" in echoed
    assert "Traceback" not in caplog.text and not caplog.records


async def test_server_sent_events_stop_at_an_event_past_the_cap() -> None:
    from bot.tools.mcp_transport import CappedEvents

    told: list[bool] = []

    async def body(chunks: list[bytes]) -> AsyncIterator[bytes]:
        for chunk in chunks:
            yield chunk

    small = [b"data: " + b"y" * 600 + b"\n\n"] * 5  # many events, each under the cap
    assert b"".join([c async for c in CappedEvents(body(small), 1000, lambda: told.append(True))]
                    ) == b"".join(small) and not told
    one_big = [b"data: " + b"y" * 600, b"z" * 600, b"\n\n"]
    got: list[bytes] = []
    with pytest.raises(Exception, match="went past 1,000 bytes"):
        async for chunk in CappedEvents(body(one_big), 1000, lambda: told.append(True)):
            got.append(chunk)
    assert told == [True] and got == one_big[:1]


async def test_a_tool_that_never_answers_times_out_without_stray_errors(
        mcp_harness: McpHarnessFactory, tmp_path: Path, capfd: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    h = await mcp_harness({"hostile": hostile_server(tmp_path / "pids")},
                          FRONTDESK_MCP_TIMEOUT="3")
    h.big.enqueue(tool_calls=[("hostile__mute", {})])
    h.big.enqueue(tool_calls=[("hostile__echo", {"text": "still here"})])
    h.big.enqueue("It never answered.")
    assert (await h.send("try the mute tool")).text == "It never answered."
    assert "did not answer within 3 s" in h.big.history[1].messages[-1].content
    assert "still here" in h.big.history[2].messages[-1].content
    await h.services.tools.mcp.stop()
    gc.collect()  # an unretrieved future's error is reported when it is collected
    assert "never retrieved" not in caplog.text + capfd.readouterr().err


async def test_a_server_that_never_answers_is_one_line(
        mcp_harness: McpHarnessFactory, capfd: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    silent = {"command": sys.executable,
              "args": ["-c", "import sys\nfor line in sys.stdin: pass"]}
    h = await mcp_harness({"silent": silent}, FRONTDESK_MCP_TIMEOUT="0.5")
    await h.services.tools.mcp.stop()
    gc.collect()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert lines == ["MCP server 'silent' did not start; its tools are absent: "
                     "no answer within 0.5 s"]
    assert "never retrieved" not in caplog.text + capfd.readouterr().err
    assert not any(name.startswith("silent__") for name in h.services.tools.registry.names())

"""The interactive console chat: each line is one message from the owner, answered in turn."""

from __future__ import annotations

import io

from bot.adapters.console import run_console
from tests.support.harness import Harness

ANSI_DIM = "\033[2m"


async def test_console_answers_each_line_with_route_and_cost_until_exit(
        harness: Harness) -> None:
    typed = io.StringIO("hi there!\n\n/notes\nexit\nnever read\n")
    out = io.StringIO()
    await run_console(harness.gateway, harness.services.settings.home,
                      typed, out)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("Frontdesk console")
    assert "> quick: hi there!" in lines
    status = [line for line in lines if line.startswith("  · ")]
    assert len(status) == 2  # the empty line is skipped; "exit" ends the chat
    assert ANSI_DIM not in out.getvalue()  # not a terminal: no escape codes
    assert "quick_reply · small 1 · big 0 · $0.0000" in status[0]
    assert "command · small 0 · big 0" in status[1]
    assert not any("never read" in call.messages[-1].content for call in harness.small.history)
    assert harness.services.memory.history("console:chat:console")[0] == ("user", "hi there!")


async def test_on_a_terminal_the_status_line_is_dim(harness: Harness) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Terminal()
    await run_console(harness.gateway, harness.services.settings.home,
                      io.StringIO("hi there!\n"), out)
    assert f"{ANSI_DIM}  · quick_reply" in out.getvalue()


async def test_console_ends_at_end_of_input(harness: Harness) -> None:
    out = io.StringIO()
    await run_console(harness.gateway, harness.services.settings.home,
                      io.StringIO("hello\n"), out)
    assert out.getvalue().endswith("> \n")


async def test_on_a_terminal_an_answer_being_written_shows_as_a_growing_preview(
        harness: Harness) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    harness.big.chunk_delay_s = 0.01
    out = Terminal()
    await run_console(harness.gateway, harness.services.settings.home,
                      io.StringIO("what is on my mind today?\n"), out)
    shown = out.getvalue()
    answer = "agent: what is on my mind today?"
    assert harness.big.streamed == 1
    preview = f"\r\033[K{ANSI_DIM}agent:"
    assert preview in shown and shown.index(preview) < shown.index(f"\r\033[K{answer}")
    assert "\u2026" in shown.split(f"\r\033[K{answer}")[0]  # the preview said it was partial
    assert f"{answer}\n" in shown  # then the answer itself, on a clean line


async def test_no_final_message_ends_with_the_partial_mark(harness: Harness) -> None:
    await harness.services.delivery.outbox.deliver("telegram", "77", "k-1", "Wait for it\u2026")
    assert harness.adapter.to("77") == ["Wait for it..."]

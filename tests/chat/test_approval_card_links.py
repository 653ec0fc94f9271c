"""An MCP approval card on Telegram links nothing another party wrote: the tool's and the
server's names, the guest's name and the arguments reach the owner as code (which Telegram
never makes a link of), whatever backticks they hold; sent through the real outbox and
python-telegram-bot to the fake Bot API."""

from __future__ import annotations

import re
from typing import Any

from bot.chat.approval_relay import ask_owner
from bot.messages import Button
from bot.models.base import ToolCall, ToolSpec
from bot.tools.approval import question
from bot.tools.registry import Caller, ToolRegistry, ToolResult
from tests.support.telegram_bot import GUEST, OWNER, Starter

URLS = ["https://tool.evil.example/a", "https://server.evil.example/b",
        "https://guest.evil.example/c", "https://args.evil.example/d"]
CODE = re.compile(r"<code[^>]*>.*?</code>", re.S)


async def nothing(arguments: dict[str, Any]) -> ToolResult:
    return ToolResult("", True)


def card(remote_name: str, server: str, guest_name: str) -> str:
    """The question the owner gets about a guest's call of a server's tool."""
    tools = ToolRegistry()
    tools.add_remote(ToolSpec("srv__fetch", "fetch a page", {"type": "object"}), nothing,
                     server=server, remote_name=remote_name, guests=True, needs_approval=True)
    caller = Caller(scope=f"telegram:{GUEST}", is_owner=False, platform="telegram",
                    chat_id=str(GUEST), name=guest_name, message_id="m1")
    call = ToolCall(id="c1", name="srv__fetch", arguments={"url": URLS[3], "why": "see `x`"})
    return question(tools, call, caller, again=False)


async def test_every_url_in_the_card_is_inside_code_and_nothing_is_a_link(
        start_telegram: Starter) -> None:
    tg = await start_telegram()
    cards = [card(f"fetch {URLS[0]}", f"srv {URLS[1]}", f"Ann {URLS[2]}"),
             # a backtick in a name cannot end its code span (nor a run of them)
             card(f"fe`tch {URLS[0]}", f"s``rv {URLS[1]}", f"`Ann {URLS[2]}")]
    for number, text in enumerate(cards):
        wait = {"key": f"approval:{number}", "question": text}
        await ask_owner(tg.services.delivery.notifier, tg.services.delivery.outbox, "telegram",
                        f"run-{number}", wait, lambda run, wait: [Button("Approve", "t1")])
        sent = tg.last(OWNER)
        assert "May I run the tool" in sent.text
        html = sent.raw_text
        assert "<a " not in html and "<a>" not in html, html
        inside = "".join(CODE.findall(html))
        outside = CODE.sub("", html)
        for url in URLS:
            assert url in inside, (url, html)
            assert url not in outside, (url, html)
    assert "fe`tch" in tg.last(OWNER).text and "s``rv" in tg.last(OWNER).text  # as typed

"""The one sanitiser, walked: a hostile string put into every place that others' text is
shown (chat Markdown for Telegram and Discord, Telegram HTML, the terminal, the log) arrives
literal and clean: no live link, no tag, no bidi override, no terminal escape.

The chat places are rendered by the adapters' own formatters (Telegram's HTML renderer,
Discord's splitter); the terminal places by the commands' own line builders.
"""

from __future__ import annotations

import logging
import re

import pytest

from bot.adapters.discord.format import split_reply as discord_parts
from bot.adapters.telegram.format import split_reply as telegram_parts
from bot.cli.reminders import list_line
from bot.config.logs import plain_message
from bot.config.text import MARKUP_CHARS, PLACES, shown
from bot.delivery.notifier import Notice, Theirs
from bot.models.base import ToolCall
from bot.reminders.store import Reminder
from bot.tools.approval import question
from bot.tools.registry import Caller, ToolRegistry

HOSTILE = "a`b [✅ Approve: safe](https://evil.example) <b>bold</b> \u202edi \x1b[2J end\nforged"
LINK = re.compile(r"(?<!\\)\[[^\]]*(?<!\\)\]\(")  # an unescaped [text]( : a live link
# Code, fenced or inline (a run of backticks to the next run as long): Discord links nothing
# in it, so a [text]( there is text.
CODE = re.compile(r"(?<![\\`])(`+)(?!`).*?(?<!`)\1(?!`)", re.S)


def assert_clean(text: str) -> None:
    assert "\x1b" not in text and "\u202e" not in text, repr(text)


def assert_telegram_literal(markdown: str) -> None:
    """Rendered as Telegram HTML: no link, no tag from the hostile words."""
    for part in telegram_parts(markdown):
        assert "<a " not in part.html and "evil.example\"" not in part.html
        assert "<b>bold" not in part.html
        assert "[✅ Approve: safe](https://evil.example)" in part.plain  # shown as typed
        assert_clean(part.html)


def assert_discord_literal(markdown: str) -> None:
    for part in discord_parts(markdown):
        assert LINK.search(CODE.sub("", part)) is None, part
        assert_clean(part)


def test_markdown_characters_are_the_adapters_own() -> None:
    # ``bot.config`` may not import the adapters: the two sets must not drift apart.
    assert set(r"\`*_{}[]()#+-.!|~<>@") == set(MARKUP_CHARS)


@pytest.mark.parametrize("where", PLACES)
def test_every_place_gets_the_words_clean(where: str) -> None:
    text = shown(HOSTILE, where)
    assert_clean(text)
    if where in ("markdown", "discord", "markdown-code"):
        assert_telegram_literal(text)
        assert_discord_literal(text)
    if where == "telegram-html":
        assert "<b>" not in text and "&lt;b&gt;" in text
    if where in ("log", "markdown-code"):
        assert "\n" not in text


def test_an_mcp_tool_name_server_guest_and_arguments_in_the_approval_card() -> None:
    tools = ToolRegistry()
    call = ToolCall(id="1", name=HOSTILE,
                    arguments={"note": HOSTILE, "more": "```\n[x](https://evil.example)"})
    guest = Caller(scope="telegram:5", is_owner=False, platform="telegram", chat_id="5",
                   name=HOSTILE, message_id="m1")
    card = question(tools, call, guest, again=False)
    assert_clean(card)
    assert card.count("```") == 2  # the arguments' fence is the only one
    for part in telegram_parts(card):
        assert "<a " not in part.html and "<b>bold" not in part.html
    for part in discord_parts(card):
        assert LINK.search(CODE.sub("", part)) is None, part


def test_names_and_messages_in_an_owner_notice() -> None:
    notice = Notice((Theirs(HOSTILE), " wrote:"), (HOSTILE,))
    assert_telegram_literal(notice.markdown())
    assert_discord_literal(notice.markdown())


def test_a_reminder_text_in_frontdesk_reminders() -> None:
    reminder = Reminder(id=7, scope="telegram:5", platform="telegram", chat_id="5",
                        text=HOSTILE, kind="message", zone="UTC",
                        first_local="2030-01-01T09:00:00+00:00", rrule=None, due_at=0.0,
                        due_local="2030-01-01T09:00:00+00:00", status="pending", source=None,
                        fired=0)
    line = list_line(reminder)
    assert_clean(line) and "\n" not in line and "[2J" in line


def test_a_log_line_quoting_someone() -> None:
    record = logging.makeLogRecord({"msg": "refused a stranger %s", "args": (HOSTILE,)})
    assert plain_message(record)
    said = logging.Formatter("%(message)s").format(record)
    assert_clean(said) and "\n" not in said and "forged" in said

"""The Discord reply splitter: limits, numbering, balanced code fences, hostile input."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bot.adapters.discord.format import (
    DISCORD_MESSAGE_LIMIT,
    FENCE,
    open_fence_after,
    plan_parts,
    split_reply,
)
from bot.config.text import escape_markdown

NUMBER = re.compile(r"^\((\d+)/(\d+)\)\n")


def numbers(parts: list[str]) -> list[tuple[int, int]]:
    found = [NUMBER.match(part) for part in parts]
    return [(int(m[1]), int(m[2])) for m in found if m]


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def test_short_reply_is_one_unnumbered_part() -> None:
    assert split_reply("  hello\n\n") == ["  hello"]
    assert split_reply(" \n \n") == []
    assert split_reply("x" * DISCORD_MESSAGE_LIMIT) == ["x" * DISCORD_MESSAGE_LIMIT]


def test_2500_characters_of_prose_become_two_numbered_parts_cut_at_a_paragraph() -> None:
    paragraphs = [f"Paragraph {i}: " + "word " * 95 for i in range(5)]  # ~490 chars each
    text = "\n\n".join(p.strip() for p in paragraphs)
    assert 2400 < len(text) < 2600

    parts = split_reply(text)

    assert numbers(parts) == [(1, 2), (2, 2)]
    assert all(len(part) <= DISCORD_MESSAGE_LIMIT for part in parts)
    assert parts[0].endswith("word")  # a paragraph ended there, nothing was cut mid-word
    assert parts[1].startswith("(2/2)\nParagraph")
    assert squeeze("".join(NUMBER.sub("", p) for p in parts)) == squeeze(text)


def test_code_block_spanning_the_cut_is_closed_and_reopened_with_its_language() -> None:
    code = "\n".join(f"    total += compute({i})  # step {i}" for i in range(80))
    text = "Here is the script:\n\n```python\n" + code + "\n```\n\nRun it with `python x.py`."
    assert len(text) > DISCORD_MESSAGE_LIMIT

    parts = split_reply(text)

    assert len(parts) == 2
    assert all(len(part) <= DISCORD_MESSAGE_LIMIT for part in parts)
    assert parts[0].endswith("\n```")
    assert parts[1].startswith("(2/2)\n```python\n    total += compute(")
    for part in parts:
        assert part.count(FENCE) % 2 == 0, part
    assert parts[1].rstrip().endswith("Run it with `python x.py`.")


def test_a_single_line_without_spaces_is_cut_hard_and_still_fits() -> None:
    text = "a" * 4100
    parts = split_reply(text)
    assert numbers(parts) == [(1, 3), (2, 3), (3, 3)]
    assert all(len(part) <= DISCORD_MESSAGE_LIMIT for part in parts)
    assert "".join(NUMBER.sub("", p) for p in parts) == text


def test_hostile_fence_header_and_many_parts_keep_every_part_within_the_limit() -> None:
    header = "```" + "x" * 3000  # not a language: re-opened as a bare fence
    text = header + "\n" + ("line of code\n" * 400) + "`" * 50 + "\n" + "z" * 9000
    parts = split_reply(text, limit=500)
    assert all(len(part) <= 500 for part in parts)
    assert [n for n, _ in numbers(parts)] == list(range(1, len(parts) + 1))
    assert len(parts) >= 20
    assert all(part.count(FENCE) % 2 == 0 for part in parts)


def test_numbers_widen_when_there_are_ten_or_more_parts() -> None:
    parts = split_reply("word " * 1000, limit=200)
    assert len(parts) >= 10
    assert numbers(parts)[9] == (10, len(parts))
    assert all(len(part) <= 200 for part in parts)


def test_open_fence_tracks_discords_rule_for_triple_backticks() -> None:
    assert open_fence_after("", "text\n```js\nlet a") == "```js"
    assert open_fence_after("```js", "let a\n```\nafter") is None
    assert open_fence_after("", "inline ```code``` stays closed") is None
    assert open_fence_after("", "```not a language!\n") == "```"


def test_too_small_a_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="at least"):
        split_reply("x" * 500, limit=20)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["word ", "\n", "\n\n", "```py\n", "```", "`", "é",
                                 "x" * 37, "   ", "\t"]), max_size=400),
       st.integers(min_value=100, max_value=400))
def test_any_input_gives_parts_that_fit_balance_and_keep_the_text(
        pieces: list[str], limit: int) -> None:
    text = "".join(pieces)
    parts = split_reply(text, limit=limit)
    assert all(0 < len(part) <= limit for part in parts)
    if len(parts) > 1:
        assert all(part.count(FENCE) % 2 == 0 for part in parts)
        assert [n for n, _ in numbers(parts)] == list(range(1, len(parts) + 1))
    bodies = "".join(p.body for p in plan_parts(text.strip("\n").rstrip(), limit - 10))
    assert squeeze(bodies) == squeeze(text)


def unescaped_markup(line: str) -> list[str]:
    """Characters Discord would read as markup: those no backslash escapes."""
    found, i = [], 0
    while i < len(line):
        if line[i] == "\\" and i + 1 < len(line) and not line[i + 1].isalnum() \
                and not line[i + 1].isspace():
            i += 2
            continue
        found += [line[i]] if line[i] in "*_~`|[]<#\\" else []
        i += 1
    return found


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["*", "\\", "[", "`", "a", " ", "\n", "é", "x" * 60, "> "]),
                max_size=500))
def test_a_quoted_escaped_notice_stays_quoted_and_escaped_in_every_part(
        pieces: list[str]) -> None:
    text = "".join(pieces)
    notice = "**Urgent**\n" + "\n".join("> " + escape_markdown(line) for line in text.split("\n"))
    for part in split_reply(notice, limit=150):
        for line in NUMBER.sub("", part).split("\n"):
            assert line == "**Urgent**" or line.startswith(">"), part
            assert line == "**Urgent**" or unescaped_markup(line[2:]) == [], part

"""Markdown to Telegram HTML and reply splitting, checked with Telegram's own HTML rules.

Every part is parsed by the fake server's copy of Telegram's HTML parser: it must be accepted,
show exactly the plain-text fallback, and fit 4,096 UTF-16 code units.
"""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.adapters.telegram.format import TELEGRAM_TEXT_LIMIT, ReplyPart, split_reply, utf16_len
from bot.adapters.telegram.markdown import html_to_plain, markdown_to_html, markdown_to_plain
from tests.fakes.telegram_html import parse_html

MARKER = re.compile(r"\n\((\d+)/(\d+)\)$")


def accepted(parts: list[ReplyPart], limit: int = TELEGRAM_TEXT_LIMIT) -> list[str]:
    """Assert Telegram would take each part as sent; return each part's text minus its number."""
    bodies = []
    for n, part in enumerate(parts, 1):
        visible, _ = parse_html(part.html)
        assert visible == part.plain == html_to_plain(part.html)
        assert 0 < utf16_len(visible) <= limit
        part.html.encode("utf-8")  # no lone surrogates: the request could not be encoded
        if len(parts) > 1:
            marker = MARKER.search(part.plain)
            assert marker and (int(marker[1]), int(marker[2])) == (n, len(parts))
            bodies.append(part.plain[:marker.start()])
        else:
            bodies.append(part.plain)
    return bodies


def test_renders_the_usual_markdown() -> None:
    md = ("# Plan\n**bold**, *italic*, _also_, ~~gone~~, `x < y`, [docs](https://e.com/?a=1&b=2)"
          "\n- one\n* two\n1. three\n> quoted\n```python\nif a < b:\n    pass\n```")
    assert markdown_to_html(md) == (
        '<b>Plan</b>\n<b>bold</b>, <i>italic</i>, <i>also</i>, <s>gone</s>, <code>x &lt; y</code>, '
        '<a href="https://e.com/?a=1&amp;b=2">docs</a>\n• one\n• two\n1. three\n'
        '<blockquote>quoted</blockquote>\n'
        '<pre><code class="language-python">if a &lt; b:\n    pass</code></pre>')
    visible, entities = parse_html(markdown_to_html(md))
    assert visible == markdown_to_plain(md)
    assert next(e for e in entities if e["type"] == "pre")["language"] == "python"
    assert [e["url"] for e in entities if e["type"] == "text_link"] == ["https://e.com/?a=1&b=2"]


def test_escapes_what_telegram_would_read_as_markup() -> None:
    md = 'Use <script>alert("x")</script> & &amp; > it; [a](https://x.io/"><b>) `<&>`'
    part, = split_reply(md)
    visible, _entities = parse_html(part.html)
    assert '<script>alert("x")</script> & &amp; > it;' in visible
    assert "<&>" in visible
    assert "<script>" not in part.html


def test_unbalanced_markdown_stays_literal_text() -> None:
    for md in ("**never closed", "*half", "`tick", "__a", "~~x", "[label](", "``` unclosed",
               "a * b * c", "snake_case_name and 2*3", "**bold *mixed** tail*"):
        part, = split_reply(md)
        visible, _ = parse_html(part.html)
        assert visible.replace("\n", "") and visible == part.plain
    assert markdown_to_plain("**never closed") == "**never closed"
    assert markdown_to_plain("snake_case_name") == "snake_case_name"
    assert markdown_to_html("[x](javascript:alert(1))") == "x (javascript:alert(1))"


def test_an_unclosed_fence_runs_to_the_end_as_code() -> None:
    html = markdown_to_html("before\n```js\nlet a = 1 < 2")
    assert html == 'before\n<pre><code class="language-js">let a = 1 &lt; 2</code></pre>'


def test_odd_unicode_survives() -> None:
    md = ("👨‍👩‍👧‍👦 🇫🇷🇩🇪 é (e\u0301) \u200b zero-width, RTL \u202eabc\u202c, "
          "𝔘𝔫𝔦𝔠𝔬𝔡𝔢 **ñ́** lone \ud800 surrogate, NUL-ish \x01")
    part, = split_reply(md)
    visible, entities = parse_html(part.html)
    assert "👨‍👩‍👧‍👦" in visible and "🇫🇷🇩🇪" in visible and "\ufffd" in visible
    bold = next(e for e in entities if e["type"] == "bold")
    utf16 = visible.encode("utf-16-le")
    assert utf16[bold["offset"] * 2:(bold["offset"] + bold["length"]) * 2].decode(
        "utf-16-le") == "ñ́"


def test_short_reply_is_one_unnumbered_part_and_blank_is_none() -> None:
    assert [p.plain for p in split_reply("hello *there*")] == ["hello there"]
    assert split_reply("") == [] and split_reply(" \n\n \t") == []


def test_limit_counts_rendered_text_not_markup() -> None:
    md = "**b** " * 600 + "&" * 500  # HTML ~ 7,000 chars, visible ~ 2,300
    part, = split_reply(md)
    assert len(part.html) > TELEGRAM_TEXT_LIMIT and utf16_len(part.plain) <= TELEGRAM_TEXT_LIMIT


def test_five_thousand_characters_split_at_paragraphs() -> None:
    paragraphs = [f"Paragraph {n}: " + "word " * 195 for n in range(5)]  # ~1,000 chars each
    md = "\n\n".join(p.strip() for p in paragraphs)
    assert 4900 < len(md) < 5100
    parts = split_reply(md)
    bodies = accepted(parts)
    assert len(parts) == 2
    for body in bodies:  # each part is whole paragraphs
        assert all(chunk.startswith("Paragraph ") and chunk.endswith("word")
                   for chunk in body.split("\n\n"))
    assert "\n\n".join(bodies) == md


def test_twenty_thousand_emoji_split_on_utf16_length() -> None:
    md = "😀" * 20_000  # 40,000 UTF-16 units, no place to break
    parts = split_reply(md)
    bodies = accepted(parts)
    assert len(parts) == 10  # 4,096 minus the "(nn/nn)" marker holds < 2,048 emoji
    assert "".join(bodies) == md


def test_hard_cuts_keep_emoji_sequences_whole() -> None:
    family = "👨‍👩‍👧"  # joined by ZERO WIDTH JOINERs
    md = family * 2000
    bodies = accepted(split_reply(md))
    for body in bodies:
        assert not body.startswith("\u200d") and not body.endswith("\u200d")
        assert body.count("\u200d") == 2 * body.count("👨")
    assert "".join(bodies) == md


def test_code_block_spanning_the_split_is_closed_and_reopened() -> None:
    code = "\n".join(f"    line_{n} = {n} < {n + 1}  # & more" for n in range(300))
    md = f"Intro.\n\n```python\n{code}\n```\n\nOutro."
    parts = split_reply(md)
    bodies = accepted(parts)
    assert len(parts) >= 3
    code_seen = []
    for part in parts:
        visible, entities = parse_html(part.html)
        pres = [e for e in entities if e["type"] == "pre"]
        assert pres and all(e["language"] == "python" for e in pres)
        start, length = pres[0]["offset"], pres[0]["length"]
        code_seen.append(visible[start:start + length])  # offsets are UTF-16; ASCII here
    assert "\n".join(code_seen) == code  # cuts fall at line ends; indentation kept
    assert bodies[0].startswith("Intro.") and bodies[-1].endswith("Outro.")


def test_bold_open_across_a_cut_is_reopened() -> None:
    md = "**" + "bold words " * 800 + "end**"
    parts = split_reply(md)
    accepted(parts)
    assert len(parts) == 3
    for part in parts:
        _visible, entities = parse_html(part.html)
        assert entities[0]["type"] == "bold" and entities[0]["offset"] == 0


def test_part_numbering_digits_are_budgeted() -> None:
    md = "x " * 30_000
    parts = split_reply(md, limit=500)
    accepted(parts, limit=500)
    assert len(parts) > 99 and parts[-1].plain.endswith(f"({len(parts)}/{len(parts)})")


markdownish = st.lists(st.sampled_from(
    [*"ab <>&\"'*_~`[]()#->\n\\", "```", "```py\n", "**", "😀", "é", "\u200d",
     "https://x.io", "&amp;", "word " * 8]),
    max_size=200).map("".join)


@settings(max_examples=300, deadline=None)
@given(markdownish, st.integers(min_value=40, max_value=200))
def test_any_input_gives_parts_telegram_accepts(md: str, limit: int) -> None:
    parts = split_reply(md, limit=limit)
    accepted(parts, limit=limit)
    whole = markdown_to_plain(md)
    assert parse_html(markdown_to_html(md))[0] == whole
    squeeze = re.compile(r"\s+")
    if parts:  # nothing visible is lost or invented, whitespace at cuts aside
        joined = "".join(MARKER.sub("", p.plain) if len(parts) > 1 else p.plain for p in parts)
        assert squeeze.sub("", joined) == squeeze.sub("", whole)


def test_escaped_markup_stays_text_and_closes_nothing() -> None:
    # what a notice does with someone else's words: every markup character backslashed
    assert markdown_to_html(r"\<https://e.com\> \@x \[a\](https://e.com) *a\*b* **c\*\*d**") \
        == "&lt;https://e.com&gt; @x [a](https://e.com) <i>a*b</i> <b>c**d</b>"

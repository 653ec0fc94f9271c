"""Telegram's side of ``parse_mode=HTML``: the visible text and entities, or Telegram's error.

Follows the Bot API's HTML rules as Telegram's own parser applies them: only the listed tags,
properly nested, attribute syntax checked, ``&lt; &gt; &amp; &quot;`` and numeric entities
decoded, a bare ``&`` kept as text, a bare ``<`` refused. Entity offsets and the message
length are in UTF-16 code units, as Telegram counts them.
"""

from __future__ import annotations

import re
from typing import Any

JSON = dict[str, Any]
_TAGS = {"b": "bold", "strong": "bold", "i": "italic", "em": "italic", "u": "underline",
         "ins": "underline", "s": "strikethrough", "strike": "strikethrough",
         "del": "strikethrough", "tg-spoiler": "spoiler", "span": "spoiler", "a": "text_link",
         "code": "code", "pre": "pre", "blockquote": "blockquote", "tg-emoji": "custom_emoji"}
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"'}
_ENTITY = re.compile(r"&(lt|gt|amp|quot|#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6});")


class ApiError(Exception):
    """An error answer of the Bot API: HTTP status = error_code, as Telegram sends it."""

    def __init__(self, code: int, description: str, retry_after: int | None = None) -> None:
        super().__init__(description)
        self.code, self.description, self.retry_after = code, description, retry_after


def utf16_len(text: str) -> int:
    """Length as Telegram counts it: UTF-16 code units."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def parse_html(text: str) -> tuple[str, list[JSON]]:
    """Parse Telegram-HTML into (visible text, entities) or raise ApiError like Telegram."""
    out: list[str] = []
    size = 0  # UTF-16 length of the visible text so far (entity offsets use it)
    stack: list[tuple[str, int, JSON]] = []  # (tag, start offset, entity fields)
    entities: list[JSON] = []
    i, n = 0, len(text)

    def fail(why: str) -> ApiError:
        return ApiError(400, f"Bad Request: can't parse entities: {why}")

    def at(pos: int) -> int:
        return len(text[:pos].encode("utf-8", "surrogatepass"))

    while i < n:
        ch = text[i]
        if ch == "&" and (decoded := _decode_entity(text, i)) is not None:
            ch, i = decoded  # a decoded "&lt;" is text, never the start of a tag
            out.append(ch)
            size += utf16_len(ch)
            continue
        if ch != "<":
            out.append(ch)
            size += utf16_len(ch)
            i += 1
            continue
        begin = i
        if text.startswith("</", i):
            if not stack:
                raise fail(f"Unexpected end tag at byte offset {at(begin)}")
            end = text.find(">", i)
            if end == -1:
                raise fail(f"Unclosed end tag at byte offset {at(begin)}")
            name = text[i + 2:end].strip().lower()
            tag, start, entity = stack.pop()
            if name and name != tag:
                raise fail(f'Unmatched end tag at byte offset {at(begin)}, '
                           f'expected "</{tag}>", found "</{name}>"')
            if tag == "code" and stack and stack[-1][0] == "pre":  # <pre><code class=...>
                if "language" in entity:
                    stack[-1][2]["language"] = entity["language"]
            elif size > start and entity:
                entities.append({"offset": start, "length": size - start, **entity})
            i = end + 1
            continue
        m = re.compile(r"[^\s>]*").match(text, i + 1)
        assert m is not None
        tag, i = m.group(0).lower(), m.end()
        if i >= n:
            raise fail(f"Unclosed start tag at byte offset {at(begin)}")
        if tag not in _TAGS:
            raise fail(f'Unsupported start tag "{tag}" at byte offset {at(begin)}')
        attrs: dict[str, str] = {}
        while True:
            while i < n and text[i].isspace():
                i += 1
            if i >= n:
                raise fail(f"Unclosed start tag at byte offset {at(begin)}")
            if text[i] == ">":
                break
            m = re.compile(r"[^\s=>]*").match(text, i)
            assert m is not None
            attr, i = m.group(0).lower(), m.end()
            if not attr:
                raise fail(f'Empty attribute name in the tag "{tag}" at byte offset {at(begin)}')
            if tag == "blockquote" and attr == "expandable":
                attrs[attr] = ""
                continue
            while i < n and text[i].isspace():
                i += 1
            if i >= n or text[i] != "=":
                raise fail(f'Expected equal sign in declaration of an attribute of the tag "{tag}"'
                           f" at byte offset {at(begin)}")
            i += 1
            if i < n and text[i] in "'\"":
                close = text.find(text[i], i + 1)
                if close == -1:
                    raise fail(f"Unclosed start tag at byte offset {at(begin)}")
                value, i = text[i + 1:close], close + 1
            else:
                m = re.compile(r"[A-Za-z0-9.\-]*").match(text, i)
                assert m is not None
                value, i = m.group(0), m.end()
            attrs[attr] = _ENTITY.sub(lambda e: _NAMED.get(e.group(1), e.group(0)), value)
        i += 1
        kind = _TAGS[tag]
        fields: JSON = {"type": kind}
        if tag == "span" and attrs.get("class") != "tg-spoiler":
            raise fail(f'Tag "span" must have class "tg-spoiler" at byte offset {at(begin)}')
        if tag == "a":
            fields = {"type": "text_link", "url": attrs["href"]} if attrs.get("href") else {}
        elif tag == "blockquote" and "expandable" in attrs:
            fields = {"type": "expandable_blockquote"}
        elif tag == "code" and attrs.get("class", "").startswith("language-"):
            fields["language"] = attrs["class"][len("language-"):]
        elif tag == "tg-emoji":
            fields["custom_emoji_id"] = attrs.get("emoji-id", "")
        stack.append((tag, size, fields))
    if stack:
        raise fail(f'Can\'t find end tag corresponding to start tag "{stack[-1][0]}"')
    return "".join(out), sorted(entities, key=lambda e: (e["offset"], -e["length"]))


def _decode_entity(text: str, i: int) -> tuple[str, int] | None:
    """The character an HTML entity at ``i`` stands for and the index after it, or None: a
    bare "&" (or an unknown entity) stays text, as in Telegram's parser."""
    m = _ENTITY.match(text, i)
    if m is None:
        return None
    name = m.group(1)
    if name in _NAMED:
        return _NAMED[name], m.end()
    code = int(name[2:], 16) if name[1] in "xX" else int(name[1:])
    return (chr(code), m.end()) if 0 < code <= 0x10FFFF else None

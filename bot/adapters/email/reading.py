"""What a mail says: its new text (quoted history and signature cut off) and its files.

``read_mail(message, max_bytes)`` is synchronous and CPU-bound: the adapter runs it in the
bot's worker pool (``read_in_worker``: another process, bounded in time and memory).
``text/plain`` is preferred; an HTML-only mail is read by the media floor's HTML
reader (``bot.media.html_text``). The quoted history and the signature are cut by
``mail-parser-reply`` (a maintained, multi-language port of GitHub's email_reply_parser),
which works with regular expressions: some inputs (a long run of blank lines, one very long
line of "On ") cost it quadratic time, so it is only ever given a text normalised first
(blank lines collapsed, long lines wrapped) and at most ``MAX_PARSED_CHARS`` long.

Charsets are decoded with replacement (an unknown or lying charset never raises); parts
beyond ``MAX_PARTS`` are not looked at; attachments together over ``max_bytes`` are dropped,
the text saying which.
"""

from __future__ import annotations

import logging
import textwrap
from dataclasses import dataclass
from email import policy
from email.message import EmailMessage, Message
from email.parser import BytesParser

from mailparser_reply import EmailReplyParser

from bot.media.html_text import visible_text_upto
from bot.media.workers import WorkerFailed, shared_pool

log = logging.getLogger(__name__)

MAX_TEXT_CHARS = 16_000  # what the desk reads of one message at most
MAX_PARSED_CHARS = MAX_TEXT_CHARS
MAX_LINE_CHARS = 200  # a longer line is wrapped before the reply parser sees it
MAX_PARTS = 100  # MIME parts looked at; the rest of a hostile mail is ignored
REPLY_LANGUAGES = ["en", "de", "fr", "nl", "it", "sv", "da", "pl", "es"]


READ_SECONDS = 20.0  # a mail's text and files, read in the worker pool
UNREADABLE = "[This mail's text could not be read.]"


@dataclass(frozen=True)
class MailFile:
    """One attachment: the sender's file name (untrusted text), its type, its bytes."""

    name: str
    mime: str
    data: bytes


@dataclass(frozen=True)
class MailText:
    """What the desk reads of one mail."""

    text: str
    attachments: tuple[MailFile, ...]


def read_mail(message: EmailMessage, max_bytes: int) -> MailText:
    """The mail's new text and its files (together at most ``max_bytes``)."""
    parts = _leaf_parts(message)
    body = _body(parts)
    files: list[MailFile] = []
    dropped: list[str] = []
    total = 0
    for part in parts:
        if not _is_attachment(part):
            continue
        name = _file_name(part, len(files) + len(dropped) + 1)
        data = _payload(part)
        if total + len(data) > max_bytes:
            dropped.append(name)
            continue
        total += len(data)
        files.append(MailFile(name, part.get_content_type(), data))
    text = new_text(body)
    if dropped:
        note = (f"[Not read: {', '.join(dropped)} — the attachments together are over "
                f"{_size(max_bytes)}.]")
        text = f"{text}\n\n{note}" if text else note
    return MailText(text, tuple(files))


def new_text(body: str) -> str:
    """What the sender wrote this time: the quoted history and the signature cut off."""
    prepared = _prepared(body)
    if not prepared.strip():
        return ""
    try:
        replies = EmailReplyParser(languages=REPLY_LANGUAGES).read(text=prepared).replies
    except Exception:  # a third-party parser: never let it lose the mail
        log.warning("the reply parser failed; the whole text is kept", exc_info=True)
        replies = []
    if not replies:
        return prepared.strip()
    latest = replies[0]  # its body lacks the signature; a mail that is all "signature"
    return (latest.body or latest.content or prepared).strip()  # keeps it


def _prepared(body: str) -> str:
    """Lines trimmed, runs of blank lines made one, long lines wrapped, the whole capped."""
    lines: list[str] = []
    size = 0
    for raw in body.splitlines():
        line = raw.rstrip()
        if not line.strip():
            if lines and lines[-1] == "":
                continue
            line = ""
        pieces = textwrap.wrap(line, MAX_LINE_CHARS, replace_whitespace=False,
                               drop_whitespace=False) if len(line) > MAX_LINE_CHARS else [line]
        for piece in pieces:
            lines.append(piece)
            size += len(piece) + 1
        if size >= MAX_PARSED_CHARS:
            break
    return "\n".join(lines)[:MAX_PARSED_CHARS]


def _leaf_parts(message: Message) -> list[Message]:
    """The non-multipart parts, depth first, at most ``MAX_PARTS`` of them."""
    found: list[Message] = []
    for part in message.walk():  # walk is a generator: stops early
        if len(found) >= MAX_PARTS:
            break
        if not part.is_multipart():
            found.append(part)
    return found


def _body(parts: list[Message]) -> str:
    """The first inline ``text/plain`` part, else the first inline HTML part as text."""
    inline = [part for part in parts if not _is_attachment(part)]
    for part in inline:
        if part.get_content_type() == "text/plain":
            return _decoded(part)
    for part in inline:
        if part.get_content_type() == "text/html":
            html = _decoded(part)
            return visible_text_upto(html, MAX_TEXT_CHARS)[0]
    return ""


def _is_attachment(part: Message) -> bool:
    disposition = (part.get_content_disposition() or "").lower()
    if disposition == "attachment":
        return True
    if part.get_content_maintype() == "text" and not part.get_filename():
        return False
    return disposition == "inline" or bool(part.get_filename()) \
        or part.get_content_maintype() not in ("text", "multipart")


def _payload(part: Message) -> bytes:
    try:
        data = part.get_payload(decode=True)
    except Exception:  # a broken transfer encoding: the bytes as they came
        log.info("an undecodable part was read raw", exc_info=True)
        data = None
    if isinstance(data, bytes):
        return data
    raw = part.get_payload()
    return raw.encode("utf-8", "replace") if isinstance(raw, str) else b""


def _decoded(part: Message) -> str:
    """A text part as text: its declared charset if Python knows it, else UTF-8; bytes that
    do not decode become U+FFFD."""
    data = _payload(part)
    charset = part.get_content_charset() or "utf-8"
    try:
        return data.decode(charset, "replace")
    except (LookupError, ValueError, TypeError):  # an unknown or hostile charset name
        return data.decode("utf-8", "replace")


def _size(count: int) -> str:
    return f"{count / (1024 * 1024):g} MB" if count >= 1024 * 1024 else f"{count} bytes"


def _file_name(part: Message, number: int) -> str:
    try:
        name = part.get_filename() or ""
    except Exception:  # a hostile RFC 2231 parameter
        name = ""
    name = " ".join(str(name).split())[:200]
    return name or f"attachment-{number}"


def read_raw_mail(raw: bytes, max_bytes: int) -> MailText:
    """``read_mail`` of a mail's bytes as the server gave them: what the bot's worker pool runs
    (``bot.media.workers``: bounded in time and memory, a hostile mail costs only a worker)."""
    message = BytesParser(policy=policy.default).parsebytes(raw)
    assert isinstance(message, EmailMessage)
    return read_mail(message, max_bytes)


async def read_in_worker(raw: bytes, max_bytes: int) -> MailText:
    """The mail's text and files, read in the worker pool; a mail that overruns its time or
    memory there is answered as unreadable, never a reason the bot stalls."""
    try:
        return await shared_pool().run(read_raw_mail, raw, max_bytes, seconds=READ_SECONDS)
    except WorkerFailed as failed:
        log.warning("a mail could not be read (%s)", failed.reason)
        return MailText(UNREADABLE, ())

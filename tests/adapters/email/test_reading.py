"""What the desk reads of a mail: the new text, HTML as text, files within the cap, never a
crash and never a long wait on hostile input."""

from __future__ import annotations

import email
import email.policy
import time
from email.message import EmailMessage

import pytest

from bot.adapters.email.reading import MAX_TEXT_CHARS, read_mail

MB = 1024 * 1024


def parsed(raw: bytes) -> EmailMessage:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


def built(text: str | None = None, html: str | None = None) -> EmailMessage:
    message = EmailMessage()
    message["From"] = "ann@example.com"
    message["Subject"] = "hi"
    if text is not None:
        message.set_content(text)
    if html is not None:
        if text is None:
            message.set_content(html, subtype="html")
        else:
            message.add_alternative(html, subtype="html")
    return message


def test_plain_text_is_preferred_and_the_quoted_history_cut() -> None:
    text = ("Can we meet on Tuesday?\n\nOn Mon, 1 Dec 2026 at 10:00, Desk <desk@example.org> "
            "wrote:\n> Here are the times.\n> 1. Tuesday 10:00\n")
    read = read_mail(built(text, "<p>THE HTML VERSION</p>"), MB)
    assert read.text == "Can we meet on Tuesday?"
    assert read.attachments == ()


def test_a_signature_is_cut() -> None:
    read = read_mail(built("Please send the invoice.\n\nSent from my iPhone\n"), MB)
    assert read.text == "Please send the invoice."


def test_german_quote_header_is_cut() -> None:
    text = "Passt mir gut.\n\nAm 01.12.2026 um 10:00 schrieb Desk <desk@example.org>:\n> alt\n"
    assert read_mail(built(text), MB).text == "Passt mir gut."


def test_html_only_mail_is_read_as_text() -> None:
    html = ("<html><head><style>p {color: red}</style></head><body><p>Hello <b>desk</b>,</p>"
            "<p>can we talk?</p><script>alert(1)</script></body></html>")
    read = read_mail(built(html=html), MB)
    assert read.text == "Hello desk,\ncan we talk?"


def test_attachments_are_kept_until_the_cap_then_named_as_dropped() -> None:
    message = built("Two files.")
    message.add_attachment(b"a" * 600, maintype="application", subtype="pdf",
                           filename="first.pdf")
    message.add_attachment(b"b" * 600, maintype="image", subtype="png", filename="second.png")
    read = read_mail(message, 1000)
    assert [(f.name, f.mime, len(f.data)) for f in read.attachments] == [
        ("first.pdf", "application/pdf", 600)]
    assert read.text.startswith("Two files.")
    assert "second.png" in read.text and "1000 bytes" in read.text


def test_an_unknown_charset_and_bad_bytes_are_replaced_not_raised() -> None:
    raw = (b"From: a@example.com\r\nContent-Type: text/plain; charset=x-no-such-charset\r\n"
           b"\r\nbonjour \xe9t\xe9\r\n")
    assert read_mail(parsed(raw), MB).text == "bonjour \ufffdt\ufffd"
    raw = b"From: a@example.com\r\nContent-Type: text/plain; charset=utf-8\r\n\r\nok \xff\r\n"
    assert read_mail(parsed(raw), MB).text == "ok \ufffd"
    raw = (b"From: a@example.com\r\nContent-Type: text/plain; charset=latin-1\r\n"
           b"\r\ncaf\xe9\r\n")
    assert read_mail(parsed(raw), MB).text == "caf\u00e9"


HOSTILE = {
    "blank lines": b"hi" + b"\n" * 200_000,
    "whitespace lines": b"hi\n" + b" \n" * 100_000 + b"\xc2\xa0\n" * 100_000,
    "one long line of On": b"On " * 100_000,
    "German headers": b"Am " * 100_000,
    "broken base64": b"Content-Transfer-Encoding: base64\r\n\r\n!!!!====" * 10,
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_bodies_are_read_quickly_and_bounded(name: str) -> None:
    start = time.monotonic()
    raw = b"From: a@example.com\r\nContent-Type: text/plain; charset=utf-8\r\n"
    body = HOSTILE[name]
    raw += body if body.startswith(b"Content-") else b"\r\n" + body
    read = read_mail(parsed(raw), MB)
    assert time.monotonic() - start < 3.0
    assert len(read.text) <= MAX_TEXT_CHARS


def test_deep_nesting_and_many_parts_are_bounded() -> None:
    boundary_open = b"".join(
        b"Content-Type: multipart/mixed; boundary=b%d\r\n\r\n--b%d\r\n" % (i, i)
        for i in range(60))
    many = b"".join(b"--z\r\nContent-Type: application/octet-stream\r\n"
                    b"Content-Disposition: attachment; filename=f%d\r\n\r\nxx\r\n" % i
                    for i in range(1000))
    for raw in (b"From: a@example.com\r\n" + boundary_open + b"Content-Type: text/plain\r\n"
                b"\r\ndeep\r\n",
                b"From: a@example.com\r\nContent-Type: multipart/mixed; boundary=z\r\n\r\n"
                + many + b"--z--\r\n"):
        message = parsed(raw)  # the parsing is the standard library's, and the adapter's
        start = time.monotonic()
        read = read_mail(message, MB)
        assert time.monotonic() - start < 3.0
        assert len(read.attachments) <= 100


def test_hostile_file_names_and_headers_do_not_raise() -> None:
    raw = (b"From: a@example.com\r\nContent-Type: multipart/mixed; boundary=z\r\n\r\n"
           b"--z\r\nContent-Type: text/plain; charset=\"\xff\xfe\"\r\n\r\nhello\r\n"
           b"--z\r\nContent-Type: application/pdf; name*=utf-8''%ZZ%\r\n"
           b"Content-Disposition: attachment; filename*=x-bogus''%FF%FE\r\n\r\nPDF\r\n"
           b"--z--\r\n")
    read = read_mail(parsed(raw), MB)
    assert read.text == "hello"
    assert len(read.attachments) == 1 and read.attachments[0].data == b"PDF"


async def test_a_mail_is_read_in_the_worker_pool_and_one_that_overruns_is_unreadable(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.adapters.email import reading

    raw = (b"From: Ann <ann@example.org>\r\nSubject: hours\r\nContent-Type: text/plain\r\n\r\n"
           b"When do you open on Saturday?\r\n")
    read = await reading.read_in_worker(raw, 1_000_000)
    assert read.text.startswith("When do you open on Saturday?")
    monkeypatch.setattr(reading, "READ_SECONDS", 0.0)  # no worker can answer in no time
    assert (await reading.read_in_worker(raw, 1_000_000)).text == reading.UNREADABLE

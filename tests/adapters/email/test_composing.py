"""A reply mail: threaded, one "Re:", marked as automatic, the same id for the same part."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

import pytest

from bot.adapters.email.composing import compose_reply, reply_subject
from bot.messages import OutgoingFile

DESK = "Front Desk <desk@example.org>"
ICS = (b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nMETHOD:CANCEL\r\nBEGIN:VEVENT\r\nUID:1\r\n"
       b"END:VEVENT\r\nEND:VCALENDAR\r\n")


def reply(**changes: object) -> EmailMessage:
    values: dict[str, object] = {
        "desk_address": DESK, "to": "Ann <ann@example.com>", "subject": "Meeting?",
        "in_reply_to": "<m2@example.com>", "references": "<m0@example.com> <m1@example.com>",
        "text": "Tuesday at 10:00 works. Grüße!", "part_key": "email:ann:m2:0", "files": ()}
    values.update(changes)
    built = compose_reply(**values)  # type: ignore[arg-type]
    # what the SMTP server receives, read back
    again = email.message_from_bytes(built.as_bytes(), policy=email.policy.default)
    assert isinstance(again, EmailMessage)
    return again


@pytest.mark.parametrize(("subject", "expected"), [
    ("Meeting?", "Re: Meeting?"),
    ("Re: Meeting?", "Re: Meeting?"),
    ("RE: Re: re:Meeting?", "Re: Meeting?"),
    ("Re[2]: Meeting?", "Re: Meeting?"),
    ("AW: Termin", "Re: Termin"),
    ("SV: Möte", "Re: Möte"),
    ("Fwd: Re: plan", "Re: Fwd: Re: plan"),
    ("Reunion next week", "Re: Reunion next week"),
    ("", "Re: your message"),
    ("  Re:   ", "Re: your message"),
])
def test_the_subject_gets_one_re(subject: str, expected: str) -> None:
    assert reply_subject(subject) == expected


def test_a_reply_is_threaded_plain_utf8_and_marked_automatic() -> None:
    mail = reply()
    assert mail["From"] == DESK
    assert mail["To"] == "Ann <ann@example.com>"
    assert mail["Subject"] == "Re: Meeting?"
    assert mail["In-Reply-To"] == "<m2@example.com>"
    assert mail["References"] == "<m0@example.com> <m1@example.com> <m2@example.com>"
    assert mail["Auto-Submitted"] == "auto-replied"
    assert mail["Date"]
    assert mail.get_content_type() == "text/plain"
    assert mail.get_content_charset() == "utf-8"
    assert mail.get_content().strip() == "Tuesday at 10:00 works. Grüße!"


def test_the_message_id_is_the_same_for_the_same_part_and_at_the_desk_s_domain() -> None:
    first = reply()["Message-ID"]
    assert first == reply()["Message-ID"]
    assert first.endswith("@example.org>")
    assert reply(part_key="email:ann:m2:1")["Message-ID"] != first


def test_a_first_mail_without_references_still_threads() -> None:
    mail = reply(references="")
    assert mail["References"] == "<m2@example.com>"
    lone = reply(references="", in_reply_to="")
    assert lone["In-Reply-To"] is None and lone["References"] is None


def test_a_calendar_file_goes_as_an_invitation_with_its_method() -> None:
    files = (OutgoingFile("meeting.ics", "text/calendar", ICS),
             OutgoingFile("notes.pdf", "application/pdf", b"%PDF-1.4"))
    mail = reply(files=files)
    assert mail.get_content_type() == "multipart/mixed"
    body, calendar, pdf = list(mail.iter_parts())
    assert body.get_content().strip() == "Tuesday at 10:00 works. Grüße!"
    assert calendar.get_content_type() == "text/calendar"
    assert calendar.get_param("method") == "CANCEL"
    assert calendar.get_filename() == "meeting.ics"
    # a text part's line ends are the mail's own (CRLF on the wire); the lines are the file's
    assert calendar.get_content().splitlines() == ICS.decode().splitlines()
    assert pdf.get_content_type() == "application/pdf"
    assert pdf.get_payload(decode=True) == b"%PDF-1.4"


def test_a_calendar_file_without_a_method_is_a_request() -> None:
    plain = ICS.replace(b"METHOD:CANCEL\r\n", b"")
    mail = reply(files=(OutgoingFile("m.ics", "text/calendar", plain),))
    calendar = list(mail.iter_parts())[1]
    assert calendar.get_param("method") == "REQUEST"


def test_line_breaks_in_what_came_from_the_mail_inject_no_header() -> None:
    mail = reply(to="ann@example.com\r\nBcc: victim@example.net",
                 subject="Hi\r\nBcc: victim@example.net",
                 in_reply_to="<m2@example.com>\r\nBcc: victim@example.net")
    assert mail["Bcc"] is None
    assert all("\n" not in str(value) for value in mail.values())
    assert mail["Subject"] == "Re: Hi Bcc: victim@example.net"  # one line, text only


def test_a_long_thread_keeps_the_latest_references() -> None:
    chain = " ".join(f"<m{i}@example.com>" for i in range(100))
    refs = reply(references=chain)["References"].split()
    assert refs[-1] == "<m2@example.com>" and refs[-2] == "<m99@example.com>"
    assert len(refs) == 21

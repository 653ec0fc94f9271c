"""Which mails are never answered, which come from a stranger, and a Reply-To elsewhere."""

from __future__ import annotations

import email
import email.policy
from email.message import EmailMessage

import pytest

from bot.adapters.email.rules import from_stranger, never_answer, reply_to_differs

DESK = "Front Desk <desk@example.org>"


def mail(headers: str, body: str = "Hello, can we meet?") -> EmailMessage:
    raw = ("From: Ann <ann@example.com>\r\nTo: desk@example.org\r\nSubject: hi\r\n"
           + headers + "\r\n" + body).encode("utf-8")
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    return message


def test_a_person_s_mail_may_be_answered() -> None:
    assert never_answer(mail("Auto-Submitted: no\r\nPrecedence: first-class\r\n"
                             "Return-Path: <ann@example.com>\r\n"), DESK) is None


@pytest.mark.parametrize(("headers", "reason"), [
    ("Auto-Submitted: auto-replied\r\n", "Auto-Submitted"),
    ("Auto-Submitted: Auto-Generated; owner-email=x@y\r\n", "Auto-Submitted"),
    ("Precedence: bulk\r\n", "Precedence"),
    ("Precedence: LIST\r\n", "Precedence"),
    ("Precedence: junk\r\n", "Precedence"),
    ("List-Id: <news.example.com>\r\n", "List-Id"),
    ("List-Unsubscribe: <mailto:u@example.com>\r\n", "List-Unsubscribe"),
    ("Return-Path: <>\r\n", "bounce"),
    ("X-Autoreply: yes\r\n", "X-Autoreply"),
    ("X-Autorespond: Out of office\r\n", "X-Autorespond"),
    ("Content-Type: multipart/report; report-type=delivery-status; boundary=b\r\n",
     "delivery report"),
])
def test_machine_and_list_mail_is_never_answered(headers: str, reason: str) -> None:
    found = never_answer(mail(headers), DESK)
    assert found is not None and reason in found


@pytest.mark.parametrize("sender", [
    "MAILER-DAEMON@mx.example.com", "postmaster@example.com", "no-reply@shop.example",
    "NoReply@shop.example", "no_reply@x.example", "noreply+bills@x.example",
    "donotreply@bank.example", "do-not-reply@bank.example", "Do.Not.Reply@bank.example",
])
def test_machine_senders_are_never_answered(sender: str) -> None:
    message = mail("")
    message.replace_header("From", f"Robot <{sender}>")
    found = never_answer(message, DESK)
    assert found is not None and "machine" in found


def test_people_whose_names_look_alike_are_answered() -> None:
    for sender in ("noreen@example.com", "postmistress@example.com", "replyguy@example.com"):
        message = mail("")
        message.replace_header("From", sender)
        assert never_answer(message, DESK) is None, sender


def test_the_desk_s_own_mail_is_never_answered() -> None:
    message = mail("")
    message.replace_header("From", "DESK@Example.org")
    assert never_answer(message, DESK) == "the desk's own address"


def test_suppress_header_alone_is_not_a_reason() -> None:
    assert never_answer(mail("X-Auto-Response-Suppress: All\r\n"), DESK) is None


def test_a_mail_without_a_sender_is_never_answered() -> None:
    message = mail("")
    del message["From"]
    assert never_answer(message, DESK) == "no sender address"


@pytest.mark.parametrize(("headers", "stranger"), [
    ("Authentication-Results: mx.example.org; dkim=pass; spf=pass; dmarc=pass "
     "header.from=example.com\r\n", False),
    ("Authentication-Results: mx.example.org; spf=pass; dmarc=fail (p=REJECT) "
     "header.from=example.com\r\n", True),
    ("Authentication-Results: mx.example.org;\r\n  DMARC=FAIL header.from=example.com\r\n",
     True),
    ("Authentication-Results: mx.example.org; dmarc=pass\r\n"
     "Authentication-Results: relay.example.net; dmarc=fail\r\n", True),
    ("Authentication-Results: mx.example.org; spf=fail (dmarc=fail said nobody)\r\n", False),
    ("Authentication-Results: mx.example.org; none\r\n", False),
    ("", False),
])
def test_dmarc_fail_in_any_authentication_results_makes_a_stranger(
        headers: str, stranger: bool) -> None:
    assert from_stranger(mail(headers)) is stranger


def test_reply_to_elsewhere_is_noticed() -> None:
    assert not reply_to_differs(mail(""))
    assert not reply_to_differs(mail("Reply-To: ANN@example.com\r\n"))
    assert reply_to_differs(mail("Reply-To: Collector <pay@evil.example>\r\n"))
    assert reply_to_differs(mail("Reply-To: ann@example.com, other@evil.example\r\n"))


def test_hostile_headers_do_not_raise() -> None:
    raw = (b"From: =?x-unknown?q?=FF=FE?= <\xff\xfe@ex>\r\nAuto-Submitted: \xff\r\n"
           b"Reply-To: =?utf-8?b?!!!?=\r\nAuthentication-Results: " + b"(" * 5000 + b"\r\n"
           b"Return-Path: " + b"<" * 5000 + b"\r\n\r\nbody")
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    never_answer(message, DESK)
    assert from_stranger(message) is False
    reply_to_differs(message)

"""`frontdesk setup` asks for the desk's mailbox: both logins tried against a real Dovecot and
aiosmtpd, a wrong password asked again naming FRONTDESK_EMAIL_PASSWORD, the password never
echoed, the FRONTDESK_EMAIL_* settings written."""

from __future__ import annotations

from pathlib import Path

import pytest
from dotenv import dotenv_values

from tests.fakes.telegram_server import FakeTelegramServer
from tests.setup.test_wizard import answer_the_rest, clean_env
from tests.support.mail_servers import DESK, PASSWORD, Dovecot, Smtp, dovecot_missing
from tests.support.terminal import Terminal

WRONG = "not-the-password-41"


def pair_on_telegram(term: Terminal, telegram: FakeTelegramServer) -> None:
    """The wizard's first steps: Telegram, its token, the owner's first message."""
    term.expect("Which chat platform?")
    term.send("t")
    term.expect("Paste the Telegram bot token")
    term.send(telegram.token)
    term.expect("Now send any message")
    telegram.push_message(42, 42, "hi there")


def test_the_mailbox_is_asked_for_and_both_logins_tried(tmp_path: Path) -> None:
    if (reason := dovecot_missing()) is not None:
        pytest.skip(reason)
    with FakeTelegramServer() as telegram, Dovecot(tmp_path / "imap") as dovecot, \
            Smtp() as smtp:
        env = clean_env(TELEGRAM_BASE_URL=telegram.base_url,
                        FRONTDESK_HOME=str(tmp_path / "home"))
        with Terminal(["setup"], cwd=tmp_path, env=env) as term:
            pair_on_telegram(term, telegram)
            term.expect("You are the owner.")
            term.expect("Answer mail too")
            term.send("y")
            term.expect("The desk's address")
            term.send("desk")
            term.expect("is not an email address")
            term.expect("The desk's address")
            term.send(DESK)
            term.expect("IMAP server [imap.frontdesk.test]")
            term.send("127.0.0.1")
            term.expect("SMTP server [smtp.frontdesk.test]")
            term.send("127.0.0.1")
            term.expect("[n]one (this machine only)")
            term.send("n")
            term.expect("IMAP port [143]")
            term.send("99999")
            term.expect("FRONTDESK_EMAIL_IMAP_PORT")
            term.expect("IMAP port [143]")
            term.send(str(dovecot.port))
            term.expect("SMTP port [25]")
            term.send(str(smtp.port))
            term.expect(f"Login name [{DESK}]")
            term.send("")
            term.expect("The mailbox's password")
            term.send(WRONG)
            term.expect("FRONTDESK_EMAIL_PASSWORD")
            term.expect("The mailbox's password")
            term.send(PASSWORD)
            term.expect("Mailbox accepted: logged in to both servers")
            term.expect("answered without your approval")
            term.send("Ana@Example.com, @partner.example")
            answer_the_rest(term)
    assert PASSWORD not in term.transcript and WRONG not in term.transcript
    got = dotenv_values(tmp_path / ".env")
    assert got["FRONTDESK_EMAIL_ADDRESS"] == DESK
    assert got["FRONTDESK_EMAIL_IMAP_HOST"] == "127.0.0.1"
    assert got["FRONTDESK_EMAIL_IMAP_PORT"] == str(dovecot.port)
    assert got["FRONTDESK_EMAIL_SMTP_PORT"] == str(smtp.port)
    assert got["FRONTDESK_EMAIL_SECURITY"] == "none"
    assert got["FRONTDESK_EMAIL_USERNAME"] == DESK
    assert got["FRONTDESK_EMAIL_PASSWORD"] == PASSWORD
    assert got["FRONTDESK_EMAIL_ALLOWED"] == "@partner.example,ana@example.com"


def test_no_mailbox_writes_no_email_settings(tmp_path: Path) -> None:
    with FakeTelegramServer() as telegram:
        env = clean_env(TELEGRAM_BASE_URL=telegram.base_url,
                        FRONTDESK_HOME=str(tmp_path / "home"))
        with Terminal(["setup"], cwd=tmp_path, env=env) as term:
            pair_on_telegram(term, telegram)
            term.expect("Answer mail too")
            term.send("")
            answer_the_rest(term)
    assert not any(name.startswith("FRONTDESK_EMAIL_")
                   for name in dotenv_values(tmp_path / ".env"))

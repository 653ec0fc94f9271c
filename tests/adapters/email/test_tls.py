"""The email adapter over TLS, against the real servers on loopback with a test certificate:
STARTTLS (IMAP and SMTP) and implicit TLS (imaps, SMTP on TLS from the first byte) answer a
mail once, each server saw TLS, and a certificate the client does not trust is refused with
the reason in one line. The bot trusts the test CA through SSL_CERT_FILE (OpenSSL's default
verify paths): its verification stays on."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.adapters.email.mailbox import Mailbox, MailboxRefused
from bot.config.email_settings import EmailSettings
from tests.adapters.email.conftest import DeskProcess, doctor, email_lines
from tests.support import mail_servers
from tests.support.mail_servers import DESK, PASSWORD, Dovecot, Smtp, email_env, mail
from tests.support.mail_tls import Certificate, make_certificate

ANA = "Ana Lima <ana@example.com>"


@pytest.fixture
def certificate(tmp_path: Path) -> Certificate:
    return make_certificate(tmp_path / "certificate")


@pytest.fixture
def tls_dovecot(tmp_path: Path, certificate: Certificate) -> Iterator[Dovecot]:
    if (reason := mail_servers.dovecot_missing()) is not None:
        pytest.skip(reason)
    with Dovecot(tmp_path / "dovecot", tls=certificate) as server:
        yield server


def tls_env(dovecot: Dovecot, smtp: Smtp, security: str, trusted: Path) -> dict[str, str]:
    """The settings for ``security``: STARTTLS on the plain ports, else the TLS ones."""
    imap_port = dovecot.port if security == "starttls" else dovecot.tls_port
    return email_env(dovecot, smtp, FRONTDESK_EMAIL_SECURITY=security,
                     FRONTDESK_EMAIL_IMAP_PORT=str(imap_port), SSL_CERT_FILE=str(trusted))


def answered_once_over_tls(tmp_path: Path, dovecot: Dovecot, smtp: Smtp,
                           env: dict[str, str]) -> None:
    desk = DeskProcess(tmp_path / "home", {"FRONTDESK_EMAIL_ALLOWED": "@example.com", **env})
    try:
        desk.start()
        assert "(IMAP 127.0.0.1, IDLE)" in desk.log()  # IDLE still offered after the upgrade
        # the bot's own login, before the test's (which are TLS too): Dovecot says "TLS" for
        # a TLS session and "secured" for a loopback login without it
        [login] = desk.poll(dovecot.logins, 5)
        assert ", TLS, " in login, login
        dovecot.deliver(mail(ANA, "Lunch on Friday?", "Are you free for lunch on Friday?",
                             message_id="<lunch-1@example.com>"))
        # pushed by IDLE: the next look (every 60 s by default) would come after this wait
        # ends; the speed itself is test_answered_once's, on plain loopback
        [reply] = smtp.wait_for(1, timeout=10)
        assert reply["In-Reply-To"] == "<lunch-1@example.com>" and reply["From"] == DESK
        assert smtp.over_tls == [True]
        desk.poll(lambda: "\\Seen" in dovecot.flags().get("<lunch-1@example.com>", ""))
        desk.stop()
    finally:
        desk.stop()
    assert len(smtp.received) == 1
    assert not [line for line in dovecot.logins() if ", TLS, " not in line]


def test_starttls_answers_a_mail_once_over_upgraded_imap_and_smtp(
        tmp_path: Path, tls_dovecot: Dovecot, certificate: Certificate) -> None:
    with Smtp(certificate) as smtp:  # require_starttls: a plain MAIL FROM is refused
        env = tls_env(tls_dovecot, smtp, "starttls", certificate.ca)
        answered_once_over_tls(tmp_path, tls_dovecot, smtp, env)


def test_implicit_tls_answers_a_mail_once_over_imaps_and_smtps(
        tmp_path: Path, tls_dovecot: Dovecot, certificate: Certificate) -> None:
    with Smtp(certificate, implicit=True) as smtp:
        env = tls_env(tls_dovecot, smtp, "tls", certificate.ca)
        answered_once_over_tls(tmp_path, tls_dovecot, smtp, env)


@pytest.mark.parametrize("security", ["starttls", "tls"])
def test_a_certificate_the_client_does_not_trust_is_named_by_the_doctor(
        tmp_path: Path, tls_dovecot: Dovecot, certificate: Certificate, security: str) -> None:
    stranger = make_certificate(tmp_path / "stranger", authority="Some other CA")
    with Smtp(certificate, implicit=security == "tls") as smtp:
        status, out = doctor(tmp_path / "home",
                             tls_env(tls_dovecot, smtp, security, stranger.ca))
    imap, sent = email_lines(out)
    assert status == 1
    for line, server in ((imap, "IMAP"), (sent, "SMTP")):
        assert line.startswith("FAIL"), out
        assert f"the {server} server's certificate" in line and "not trusted" in line, line
        assert "unable to get local issuer certificate" in line, line
    assert "Traceback" not in out and PASSWORD not in out
    assert not tls_dovecot.logins()  # nothing was sent over an untrusted connection
    assert not smtp.received


@pytest.mark.parametrize("security", ["starttls", "tls"])
async def test_a_refused_handshake_closes_without_waiting_for_a_logout(
        tls_dovecot: Dovecot, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        security: str) -> None:
    monkeypatch.setenv("SSL_CERT_FILE", str(make_certificate(tmp_path / "other").ca))
    port = tls_dovecot.port if security == "starttls" else tls_dovecot.tls_port
    mailbox = Mailbox(EmailSettings(DESK, "127.0.0.1", "127.0.0.1", imap_port=port,
                                    security=security, password=PASSWORD))
    with pytest.raises(MailboxRefused, match=r"certificate for 127\.0\.0\.1 is not trusted"):
        await mailbox.open()
    began = time.monotonic()
    await mailbox.close()  # a LOGOUT on the closed connection would wait out its 5 s
    assert mailbox.client is None and time.monotonic() - began < 2.5

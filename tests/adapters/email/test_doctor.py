"""`frontdesk doctor`'s email lines against the real servers, and a refused login that leaves
the other platforms working."""

from __future__ import annotations

from pathlib import Path

from tests.adapters.email.conftest import doctor, email_lines
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.mail_servers import PASSWORD, Dovecot, Smtp, email_env
from tests.support.telegram_process import OWNER, FrontdeskProcess


def test_the_doctor_logs_in_to_both_servers(tmp_path: Path, dovecot: Dovecot,
                                             smtp: Smtp) -> None:
    _, out = doctor(tmp_path, email_env(dovecot, smtp))
    imap, sent = email_lines(out)
    assert imap.startswith("ok") and "IMAP 127.0.0.1: logged in" in imap and "IDLE" in imap
    assert sent.startswith("ok") and "SMTP 127.0.0.1: logged in" in sent


def test_a_wrong_password_is_named_and_never_shown(tmp_path: Path, dovecot: Dovecot,
                                                   smtp: Smtp) -> None:
    wrong = "not-the-password-41"
    status, out = doctor(tmp_path, email_env(dovecot, smtp, FRONTDESK_EMAIL_PASSWORD=wrong))
    imap, sent = email_lines(out)
    assert status == 1
    assert imap.startswith("FAIL") and "FRONTDESK_EMAIL_PASSWORD" in imap
    assert sent.startswith("FAIL") and "SMTP server refused the login" in sent
    assert "FRONTDESK_EMAIL_PASSWORD" in sent  # the 535 named, not a timeout
    assert wrong not in out and PASSWORD not in out


def test_telegram_keeps_working_when_the_mailbox_refuses_the_login(
        tmp_path: Path, dovecot: Dovecot, smtp: Smtp) -> None:
    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path, env=email_env(
            dovecot, smtp, FRONTDESK_EMAIL_PASSWORD="not-the-password-41"))
        try:
            bot.start()
            telegram.push_message(OWNER, OWNER, "hello")
            [reply] = bot.replies(OWNER, 1)
            assert reply.text
            bot.poll(lambda: "FRONTDESK_EMAIL_PASSWORD" in bot.log())
            assert "not-the-password-41" not in bot.log()
        finally:
            bot.stop()

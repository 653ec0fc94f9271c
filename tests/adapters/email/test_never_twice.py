"""Polling, a redelivery after a UIDVALIDITY reset, a duplicated Message-ID, and the mail that
is never answered: each through a real Dovecot and a real SMTP server."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.adapters.email.conftest import DeskProcess
from tests.support.mail_servers import DESK, Dovecot, Smtp, dovecot_missing, email_env, mail

ANA = "Ana Lima <ana@example.com>"


def test_a_server_without_idle_is_polled(tmp_path: Path, smtp: Smtp) -> None:
    if (reason := dovecot_missing()) is not None:
        pytest.skip(reason)
    with Dovecot(tmp_path / "plain", idle=False) as dovecot:
        desk = DeskProcess(tmp_path / "home", email_env(
            dovecot, smtp, FRONTDESK_EMAIL_ALLOWED="@example.com", FRONTDESK_EMAIL_POLL="0.3"))
        try:
            desk.start()
            assert "polling every 0.3 s" in desk.log()
            dovecot.deliver(mail(ANA, "Hello", "Are you there?",
                                 message_id="<poll-1@example.com>"))
            [reply] = smtp.wait_for(1)
            assert reply["In-Reply-To"] == "<poll-1@example.com>"
        finally:
            desk.stop()


def test_a_reset_uidvalidity_and_a_duplicated_message_id_are_answered_once(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    dovecot.create("Desk")
    desk = desk_process(FRONTDESK_EMAIL_FOLDER="Desk")
    first = mail(ANA, "Invoice", "Did the invoice arrive?", message_id="<inv-1@example.com>")
    dovecot.deliver(first, "Desk")
    desk.start()
    smtp.wait_for(1)
    desk.poll(lambda: "\\Seen" in dovecot.flags("Desk").get("<inv-1@example.com>", ""))
    dovecot.deliver(first, "Desk")  # the same Message-ID again
    desk.stop()
    dovecot.reset_folder("Desk")  # a new UIDVALIDITY: every UID starts over
    dovecot.deliver(first, "Desk")
    dovecot.deliver(mail(ANA, "Second", "One more thing.", message_id="<inv-2@example.com>"),
                    "Desk")
    desk.start()
    smtp.wait_for(2)
    desk.poll(lambda: "\\Seen" in dovecot.flags("Desk").get("<inv-1@example.com>", ""))
    desk.poll(lambda: "\\Seen" in dovecot.flags("Desk").get("<inv-2@example.com>", ""))
    answered = [str(reply["In-Reply-To"]) for reply in smtp.received]
    assert answered == ["<inv-1@example.com>", "<inv-2@example.com>"]


def test_a_bounce_a_list_an_auto_reply_and_a_no_reply_sender_are_never_answered(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    desk = desk_process()
    desk.start()
    dovecot.deliver(mail("MAILER-DAEMON@example.com", "Undelivered Mail Returned to Sender",
                         "Your message could not be delivered.",
                         message_id="<bounce@example.com>", Return_Path="<>"))
    dovecot.deliver(mail("news@example.com", "Weekly digest", "This week: ...",
                         message_id="<list@example.com>", List_Id="<weekly.example.com>",
                         List_Unsubscribe="<mailto:leave@example.com>"))
    dovecot.deliver(mail("bo@example.com", "Out of office", "I am away until Monday.",
                         message_id="<away@example.com>", Auto_Submitted="auto-replied"))
    dovecot.deliver(mail("no-reply@example.com", "Your receipt", "Thanks for your order.",
                         message_id="<receipt@example.com>"))
    dovecot.deliver(mail(DESK, "Loop", "The desk's own mail.", message_id="<own@x.test>"))
    dovecot.deliver(mail(ANA, "A real question", "Did my note reach you?",
                         message_id="<real@example.com>"))
    [reply] = smtp.wait_for(1)
    assert reply["In-Reply-To"] == "<real@example.com>"
    ids = ["<bounce@example.com>", "<list@example.com>", "<away@example.com>",
           "<receipt@example.com>", "<own@x.test>"]
    desk.poll(lambda: all("\\Seen" in dovecot.flags().get(id_, "") for id_ in ids))
    assert [str(r["In-Reply-To"]) for r in smtp.received] == ["<real@example.com>"], \
        [(str(r["Message-ID"]), r.get_body().get_content()) for r in smtp.received]


def test_replies_to_one_correspondent_stop_at_the_days_share(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    desk = desk_process(FRONTDESK_EMAIL_REPLIES_PER_DAY="2")
    desk.start()
    for number in range(4):
        dovecot.deliver(mail(ANA, f"Question {number}", "Still there?",
                             message_id=f"<q{number}@example.com>"))
    desk.poll(lambda: all("\\Seen" in dovecot.flags().get(f"<q{n}@example.com>", "")
                          for n in range(4)))
    assert len(smtp.to("ana@example.com")) == 2

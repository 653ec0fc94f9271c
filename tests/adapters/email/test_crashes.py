"""SIGKILL while a mail is being answered: after the restart it is answered once.

Killed after the mail was recorded but before the SMTP server took the reply: one reply.
Killed after the SMTP server kept the reply but before it said so (and before the bot's
mark): the reply is sent again with the same Message-ID, so the correspondent's client shows
one mail (the crash statement of docs/email.md)."""

from __future__ import annotations

from collections.abc import Callable

from tests.adapters.email.conftest import DeskProcess
from tests.support.mail_servers import Dovecot, Smtp, mail

ANA = "Ana Lima <ana@example.com>"


def test_killed_after_receiving_the_mail_is_answered_once(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    desk = desk_process()
    desk.start()
    smtp.keeper.hang_before.set()
    dovecot.deliver(mail(ANA, "Quote", "Could you send the quote?",
                         message_id="<quote@example.com>"))
    assert smtp.keeper.reached.wait(20), desk.log()[-2000:]
    desk.kill()
    assert smtp.received == []
    assert "\\Seen" not in dovecot.flags()["<quote@example.com>"]  # flags are not the record
    smtp.keeper.hang_before.clear()
    desk.start()
    [reply] = smtp.wait_for(1)
    assert reply["In-Reply-To"] == "<quote@example.com>"
    desk.poll(lambda: "\\Seen" in dovecot.flags()["<quote@example.com>"])
    dovecot.deliver(mail(ANA, "Thanks", "Got it.", message_id="<thanks@example.com>"))
    smtp.wait_for(2)
    assert [str(r["In-Reply-To"]) for r in smtp.received] == ["<quote@example.com>",
                                                               "<thanks@example.com>"]


def test_killed_after_the_smtp_server_accepted_the_resend_has_the_same_message_id(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    desk = desk_process()
    desk.start()
    smtp.keeper.hang.set()
    dovecot.deliver(mail(ANA, "Contract", "Is the contract signed?",
                         message_id="<contract@example.com>"))
    [kept] = smtp.wait_for(1)
    desk.kill()
    smtp.keeper.hang.clear()
    desk.start()
    desk.poll(lambda: "\\Seen" in dovecot.flags()["<contract@example.com>"])
    replies = smtp.received
    assert {str(r["Message-ID"]) for r in replies} == {str(kept["Message-ID"])}
    assert len(replies) <= 2  # at most the one copy the crash statement allows
    dovecot.deliver(mail(ANA, "And", "One more.", message_id="<more@example.com>"))
    smtp.wait_for(len(replies) + 1)
    assert [str(r["In-Reply-To"]) for r in smtp.received][-1] == "<more@example.com>"

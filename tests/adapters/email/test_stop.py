"""SIGTERM with email: the send under way finishes, an answer not sent waits for the next
start, and the process exits on its own (``DeskProcess.stop`` fails the test otherwise)."""

from __future__ import annotations

from collections.abc import Callable

from tests.adapters.email.conftest import DeskProcess
from tests.support.mail_servers import Dovecot, Smtp, mail

ANA = "Ana Lima <ana@example.com>"
IDS = ["<stop-1@example.com>", "<stop-2@example.com>"]


def test_a_stop_while_answering_finishes_the_send_and_answers_the_rest_after_a_restart(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    smtp.keeper.answer_after = 1.0  # a busy server: its "250 OK" comes a second late
    desk = desk_process()
    desk.start()
    for number, message_id in enumerate(IDS, 1):
        dovecot.deliver(mail(ANA, f"Question {number}", "Can you help?",
                             message_id=message_id))
    smtp.wait_for(1)  # the first answer's send is under way; the second waits behind it
    desk.stop()  # the held-off second answer once kept the stop waiting for ever
    smtp.keeper.answer_after = 0.0
    desk.start()
    desk.poll(lambda: all("\\Seen" in dovecot.flags().get(id_, "") for id_ in IDS))
    assert sorted(str(reply["In-Reply-To"]) for reply in smtp.received) == IDS  # once each

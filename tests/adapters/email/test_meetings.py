"""A meeting asked for by mail, through a real Dovecot and aiosmtpd: the times come as a
numbered list in the mail (a mail has no buttons), and the guest's typed answer, "2" or the
day and time, is taken as their pick."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from email.message import EmailMessage

from tests.adapters.email.conftest import DeskProcess
from tests.support.mail_servers import Dovecot, Smtp, mail

HOURS = "Mon-Sun 08:00-20:00"


def times_in(reply: EmailMessage) -> list[str]:
    """The numbered choices of a reply's text, in order."""
    text = reply.get_body().get_content().replace("\r\n", "\n")
    return re.findall(r"^\d\. (.+)$", text, flags=re.MULTILINE)


def ask_and_pick(dovecot: Dovecot, smtp: Smtp, desk: DeskProcess, sender: str,
                 pick: Callable[[list[str]], str]) -> tuple[list[str], str]:
    """The guest asks for a meeting, then answers the numbered times; the offered times and
    the desk's answer to the pick."""
    before = len(smtp.received)
    name = sender.partition("@")[0]
    dovecot.deliver(mail(sender, "Budget", "Could we meet next week to talk about the budget?",
                         message_id=f"<meet-{name}@example.com>"))
    offer = desk.poll(lambda: next((r for r in smtp.received[before:] if times_in(r)), None))
    offered = times_in(offer)
    desk.poll(lambda: "\\Seen" in dovecot.flags().get(f"<meet-{name}@example.com>", ""))
    # one mail answers the request: the times and words that fit a mail, nothing after it
    answers = [r for r in smtp.received if r["In-Reply-To"] == f"<meet-{name}@example.com>"]
    assert answers == [offer], [r.get_body().get_content() for r in answers]
    assert "button" not in offer.get_body().get_content().lower()
    after = len(smtp.received)
    dovecot.deliver(mail(sender, "Re: Budget", pick(offered),
                         message_id=f"<pick-{name}@example.com>",
                         In_Reply_To=str(offer["Message-ID"])))
    answer = desk.poll(lambda: next((r for r in smtp.received[after:]
                                     if r["In-Reply-To"] == f"<pick-{name}@example.com>"), None))
    return offered, answer.get_body().get_content().replace("\r\n", "\n")


def test_a_guest_picks_a_time_by_its_number_or_its_words(
        dovecot: Dovecot, smtp: Smtp, desk_process: Callable[..., DeskProcess]) -> None:
    desk = desk_process(FRONTDESK_MEETING_HOURS=HOURS)
    desk.start()
    offered, held = ask_and_pick(dovecot, smtp, desk, "ana@example.com", lambda times: "2")
    assert len(offered) == 4 and offered[-1] == "None of these", offered
    assert held.startswith(f"Held for you: {offered[1]}"), held
    # the words of a time: its day and its clock time ("Sat 09:00")
    offered, held = ask_and_pick(dovecot, smtp, desk, "bo@example.com",
                                 lambda times: f"{times[2].split()[0]} {times[2].split()[-1]}")
    assert held.startswith(f"Held for you: {offered[2]}"), held
    per_id = Counter(str(reply["Message-ID"]) for reply in smtp.received)
    assert set(per_id.values()) == {1}, per_id  # no outbox part went out twice
    assert len(smtp.received) == 4  # an offer and an answer to each pick

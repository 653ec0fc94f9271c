"""A guest's mail, end to end: `frontdesk run` reads it from a real Dovecot, the owner gets the
draft on the fake Telegram (the real python-telegram-bot client) with Send / Don't send, and
Send puts exactly one reply on the real SMTP server, threaded, To the sender (or to the mail's
Reply-To), From the desk; Don't send sends nothing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path

import pytest

from tests.adapters.telegram.test_adapter_approvals import edited, press, tokens
from tests.fakes.telegram_server import FakeTelegramServer, SentMessage
from tests.support.mail_servers import DESK, Dovecot, Smtp, email_env, mail
from tests.support.telegram_process import OWNER, FrontdeskProcess


@pytest.fixture
def desk(tmp_path: Path, dovecot: Dovecot, smtp: Smtp) -> Iterator[FrontdeskProcess]:
    with FakeTelegramServer() as telegram:
        telegram.add_chat(OWNER)  # the owner's private chat, where the drafts go
        env = email_env(dovecot, smtp, FRONTDESK_EMAIL_ALLOWED="@example.com",
                        FRONTDESK_STREAM="0", FRONTDESK_WRITES_PER_SECOND="1000",
                        FRONTDESK_GUEST_MESSAGES_PER_HOUR="0")
        (tmp_path / "home").mkdir()
        process = FrontdeskProcess(telegram, tmp_path / "home", env=env)
        process.start()
        process.poll(lambda: "Email:" in process.log())
        yield process
        process.stop()


def card_for(desk: FrontdeskProcess, words: str) -> SentMessage:
    """The owner's approval card quoting ``words``."""
    return desk.wait(lambda: next((m for m in desk.telegram.messages_to(OWNER)
                                   if words in m.text and m.reply_markup), None))


def replies_to(smtp: Smtp, message_id: str) -> list[EmailMessage]:
    return [reply for reply in smtp.received if reply["In-Reply-To"] == message_id]


def test_the_owner_sends_a_guests_draft_once_and_drops_another(
        desk: FrontdeskProcess, dovecot: Dovecot, smtp: Smtp) -> None:
    telegram = desk.telegram
    dovecot.deliver(mail("Gus Guest <gus@guest.test>", "Opening hours",
                         "When are you open on Saturdays?", message_id="<g-1@guest.test>",
                         References="<earlier@guest.test>"))
    card = card_for(desk, "When are you open on Saturdays?")
    assert "gus@guest.test" in card.text
    assert list(tokens(card)) == ["Send", "Don't send"]
    assert smtp.received == []  # a guest's answer waits for the owner
    press(telegram, desk, OWNER, card, tokens(card)["Send"])
    assert "Sent." in edited(telegram, desk, card).text
    [reply] = desk.poll(lambda: replies_to(smtp, "<g-1@guest.test>"))
    assert reply["Subject"] == "Re: Opening hours"
    assert str(reply["References"]).split() == ["<earlier@guest.test>", "<g-1@guest.test>"]
    assert reply["To"] == "gus@guest.test" and reply["From"] == DESK
    assert reply.get_body().get_content().strip()  # the draft the owner saw

    # a mail whose Reply-To is not its From: the approved reply goes to the Reply-To
    dovecot.deliver(mail("Ann Assistant <ann@guest.test>", "Re: Invoice 12",
                         "Please send the invoice again.", message_id="<g-2@guest.test>",
                         Reply_To="Billing <billing@other.test>"))
    card = card_for(desk, "Please send the invoice again.")
    press(telegram, desk, OWNER, card, tokens(card)["Send"])
    [reply] = desk.poll(lambda: replies_to(smtp, "<g-2@guest.test>"))
    assert reply["To"] == "billing@other.test" and reply["From"] == DESK
    assert reply["Subject"] == "Re: Invoice 12"

    # Don't send: nothing leaves; a press again decides nothing more
    dovecot.deliver(mail("gus@guest.test", "One more", "Can I bring my dog?",
                         message_id="<g-3@guest.test>"))
    card = card_for(desk, "Can I bring my dog?")
    buttons = tokens(card)
    press(telegram, desk, OWNER, card, buttons["Don't send"])
    assert "Not sent." in edited(telegram, desk, card).text
    late = press(telegram, desk, OWNER, card, buttons["Send"])  # decided already
    assert "Sent" not in str(late.get("text"))
    # a fourth mail from an allowed sender is answered directly: once it is, every mail
    # before it has had its turn
    dovecot.deliver(mail("bo@example.com", "Hello", "Are you there?",
                         message_id="<a-1@example.com>"))
    desk.poll(lambda: replies_to(smtp, "<a-1@example.com>"))
    assert replies_to(smtp, "<g-3@guest.test>") == []
    per_id = Counter(str(reply["Message-ID"]) for reply in smtp.received)
    assert set(per_id.values()) == {1}, per_id
    per_mail = Counter(str(reply["In-Reply-To"]) for reply in smtp.received)
    assert per_mail == {"<g-1@guest.test>": 1, "<g-2@guest.test>": 1,
                        "<a-1@example.com>": 1}, per_mail


def test_an_urgent_mail_never_answered_still_reaches_the_owner(
        desk: FrontdeskProcess, dovecot: Dovecot, smtp: Smtp) -> None:
    """A list mail (allowed domain) and a no-reply sender (a stranger) that say something
    urgent: the owner is told on Telegram, the mailbox gets nothing back, and no draft card is
    made for an address that must never be answered."""
    dovecot.deliver(mail("Monitoring <alerts@example.com>", "ALERT",
                         "URGENT: the server room is flooding, water on the floor",
                         message_id="<alert-1@example.com>", List_Id="<alerts.example.com>"))
    dovecot.deliver(mail("noreply@bank.test", "Card blocked",
                         "Urgent: suspicious payments, your card is blocked now",
                         message_id="<bank-1@bank.test>"))
    for words in ("server room is flooding", "suspicious payments"):
        notice = desk.wait(lambda words=words: next(
            (m for m in desk.telegram.messages_to(OWNER) if words in m.text), None))
        assert not notice.reply_markup  # a notice, not a draft to approve
    desk.poll(lambda: "\\Seen" in dovecot.flags().get("<bank-1@bank.test>", ""))
    desk.poll(lambda: "\\Seen" in dovecot.flags().get("<alert-1@example.com>", ""))
    assert smtp.received == []
    assert not [m for m in desk.telegram.messages_to(OWNER)  # no card to approve for either
                if m.reply_markup and ("suspicious" in m.text or "flooding" in m.text)]

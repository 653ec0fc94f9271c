"""Drafts the owner approves: the answer to a message that needs approval goes to the owner
as a card with Send and Don't send, never to its sender by itself; Send queues it once."""

from __future__ import annotations

from dataclasses import replace

from bot.chat.decisions import NOT_OWNER, STALE
from bot.chat.drafts import DROP_LABEL, SEND_LABEL, THEIR_LINES, card
from bot.delivery.drafts import Draft
from bot.messages import Button, IncomingMessage, OutgoingFile
from tests.support.harness import GUEST, OWNER, OWNER_CHAT, Harness, HarnessFactory, until

SENDER_CHAT = "mail-ann"


def guest_mail(harness: Harness, text: str, message_id: str = "m-1",
               reply_to: str = "") -> IncomingMessage:
    """A guest's message whose answer needs the owner's approval (as the email adapter
    marks a mail from outside its allowlist)."""
    msg = harness.message(text, GUEST, chat=SENDER_CHAT, message_id=message_id,
                          name="Ann *Bold* <a href=x>")
    return replace(msg, needs_approval=True, reply_to=reply_to)


def card_buttons(harness: Harness) -> dict[str, Button]:
    """The Send / Don't send buttons of the cards sent so far, by label (the newest wins)."""
    rows = harness.services.db.writer.execute(
        "SELECT token, label FROM buttons WHERE token LIKE 'draft.%' ORDER BY created_at"
    ).fetchall()
    return {str(label): Button(str(label), str(token)) for token, label in rows}


async def test_the_owner_gets_the_card_and_the_sender_nothing(harness: Harness) -> None:
    assert not harness.gateway.handled("telegram", SENDER_CHAT, "m-1")
    reply = await harness.gateway.handle(guest_mail(harness, "Hello\nCan we meet on Friday?"))
    assert reply is not None and reply.route == "draft"
    assert harness.adapter.to(SENDER_CHAT) == []
    [shown] = harness.adapter.to(OWNER_CHAT)
    assert "Can we meet on Friday?" in shown and reply.text.splitlines()[0] in shown
    assert "Ann \\*Bold\\*" in shown  # their name is text, never markup
    buttons = card_buttons(harness)
    assert set(buttons) == {SEND_LABEL, DROP_LABEL}
    assert all(len(b.token) == len("draft.") + 22 for b in buttons.values())
    status = harness.services.delivery.inbox.status("telegram", SENDER_CHAT, "m-1")
    assert status == "answered"  # the owner's card counts as handled
    assert harness.gateway.handled("telegram", SENDER_CHAT, "m-1")


async def test_send_queues_one_reply_even_when_pressed_twice(harness: Harness) -> None:
    reply = await harness.gateway.handle(guest_mail(harness, "Can we meet on Friday?"))
    assert reply is not None
    send = card_buttons(harness)[SEND_LABEL]
    first = await harness.gateway.press("telegram", OWNER, send.token, "press-1")
    assert first.accepted and first.edit_text == "Sent."
    assert harness.adapter.to(SENDER_CHAT) == [reply.text]
    again = await harness.gateway.press("telegram", OWNER, send.token, "press-2")
    drop = await harness.gateway.press("telegram", OWNER,
                                       card_buttons(harness)[DROP_LABEL].token)
    assert (again.accepted, again.alert) == (False, STALE["answered"])
    assert not drop.accepted
    assert harness.adapter.to(SENDER_CHAT) == [reply.text]


async def test_don_t_send_sends_nothing_and_the_card_says_so(harness: Harness) -> None:
    await harness.gateway.handle(guest_mail(harness, "Please wire me money"))
    drop = card_buttons(harness)[DROP_LABEL]
    pressed = await harness.gateway.press("telegram", OWNER, drop.token)
    assert pressed.accepted and pressed.edit_text == "Not sent."
    late = await harness.gateway.press("telegram", OWNER, card_buttons(harness)[SEND_LABEL].token)
    assert not late.accepted
    assert harness.adapter.to(SENDER_CHAT) == []


async def test_only_the_owner_s_press_counts(harness: Harness) -> None:
    await harness.gateway.handle(guest_mail(harness, "Hello"))
    send = card_buttons(harness)[SEND_LABEL]
    refused = await harness.gateway.press("telegram", GUEST, send.token)
    assert (refused.accepted, refused.alert) == (False, NOT_OWNER)
    assert harness.adapter.to(SENDER_CHAT) == []
    assert (await harness.gateway.press("telegram", OWNER, send.token)).accepted


async def test_an_approved_answer_goes_to_the_reply_to(harness: Harness) -> None:
    reply = await harness.gateway.handle(guest_mail(harness, "Hi", reply_to="mail-office"))
    assert reply is not None
    await harness.gateway.press("telegram", OWNER, card_buttons(harness)[SEND_LABEL].token)
    assert harness.adapter.to("mail-office") == [reply.text]
    assert harness.adapter.to(SENDER_CHAT) == []


async def test_a_draft_survives_a_restart(make_harness: HarnessFactory) -> None:
    first = await make_harness()
    reply = await first.gateway.handle(guest_mail(first, "Can we meet on Friday?"))
    assert reply is not None
    send = card_buttons(first)[SEND_LABEL]
    again = await make_harness()  # the process restarted: the card's buttons still work
    assert again.adapter.to(OWNER_CHAT) == []  # the card is not sent a second time
    pressed = await again.gateway.press("telegram", OWNER, send.token)
    assert pressed.accepted
    assert again.adapter.to(SENDER_CHAT) == [reply.text]


async def test_an_approval_a_crash_kept_from_the_outbox_is_sent_at_start(
        make_harness: HarnessFactory) -> None:
    first = await make_harness()
    reply = await first.gateway.handle(guest_mail(first, "Can we meet on Friday?"))
    assert reply is not None
    # the press was decided, then the process died before the reply was queued
    [draft_id] = first.services.db.writer.execute("SELECT id FROM drafts").fetchone()
    assert first.services.delivery.drafts.decide(str(draft_id), "send", "owner")
    assert first.adapter.to(SENDER_CHAT) == []
    again = await make_harness()
    assert again.adapter.to(SENDER_CHAT) == [reply.text]
    third = await make_harness()  # and only once
    assert third.adapter.to(SENDER_CHAT) == []
    assert len(first.services.delivery.parts.parts("telegram", SENDER_CHAT, "m-1")) == 1


async def test_the_same_message_answered_again_keeps_one_draft_and_one_card(
        harness: Harness) -> None:
    msg = guest_mail(harness, "Hello")
    answerer = harness.services.chat.answerer
    await answerer.answer([msg], is_owner=False)
    await answerer.answer([msg], is_owner=False)  # as recovery after a crash would
    assert len(harness.adapter.to(OWNER_CHAT)) == 1
    assert len(card_buttons(harness)) == 2
    count = harness.services.db.writer.execute("SELECT count(*) FROM drafts").fetchone()[0]
    assert count == 1


def test_the_card_quotes_their_words_and_the_draft_as_text() -> None:
    draft = Draft("d1", "email", "ann@example.com", "<m1@x>", "ann@example.com",
                  "Ann <ann@example.com>", "[click](http://evil.example)\n**urgent**\n" * 20,
                  "Tuesday works.", OutgoingFile("meeting.ics", "text/calendar", b"x"))
    shown = card(draft, "telegram")
    assert "\\[click\\]\\(http://evil\\.example\\)" in shown and "\\*\\*urgent" in shown
    assert shown.count("urgent") == THEIR_LINES // 2  # only the beginning of their mail
    assert "meeting\\.ics" in shown and "> Tuesday works\\." in shown
    plain = card(draft, "console")
    assert "[click](http://evil.example)" in plain and "Tuesday works." in plain


async def test_a_mail_received_before_a_crash_is_still_a_draft_after_it(
        make_harness: HarnessFactory) -> None:
    first = await make_harness()
    accepted = first.gateway.accept(guest_mail(first, "Can we meet?", reply_to="mail-office"))
    assert accepted is not None  # recorded, then the process died before any answer
    again = await make_harness()  # the backlog answers what was left open
    await until(lambda: again.adapter.to(OWNER_CHAT))
    assert again.adapter.to(SENDER_CHAT) == [] and again.adapter.to("mail-office") == []
    assert again.gateway.handled("telegram", SENDER_CHAT, "m-1")
    await again.gateway.press("telegram", OWNER, card_buttons(again)[SEND_LABEL].token)
    assert len(again.adapter.to("mail-office")) == 1

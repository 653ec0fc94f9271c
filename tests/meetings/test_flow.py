"""The meeting flow through the gateway: /meet, a slot pressed, the owner's Approve, one event."""

from __future__ import annotations

from tests.meetings.conftest import GUEST, OWNER, OWNER_CHAT, DeskFactory


async def test_a_guest_books_through_meet_and_the_owners_approve(make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet the budget")
    labels = [b.label for b in offer.buttons]
    assert len(labels) == 4 and labels[-1] == "None of these", offer.text
    assert "UTC" in offer.text and "the budget" in offer.text
    picked = await desk.press(offer.buttons[0], GUEST)
    assert picked.accepted
    assert any(t.startswith("Held for you") for t in desk.to(GUEST))
    question = desk.owner_texts()[-1]
    assert "Bob \\*bold\\*" in question and "telegram id 200" in question
    assert "“the budget”" in question
    approve = next(b for b in desk.adapter.last_buttons(OWNER_CHAT) if b.label == "Approve")
    pressed = await desk.press(approve, OWNER)
    assert pressed.accepted
    assert desk.calendar is not None and len(desk.calendar.ours()) == 1
    booked = [t for t in desk.to(GUEST) if t.startswith("Booked:")]
    assert len(booked) == 1
    assert any(t.startswith("Booked:") for t in desk.owner_texts())
    rows = [m.to_json() for m in desk.app.meetings.listing()]
    assert [r["status"] for r in rows] == ["booked"]
    assert rows[0]["uid"] == desk.calendar.ours()[0]["uid"]

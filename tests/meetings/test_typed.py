"""A guest answers their offer by typing ("the second one", "Tuesday 10:00", "2") as well as by
button: ``match_choice`` reads the words, ``Decisions.answer_typed`` takes them as the guest's
own press on their own offer, and nothing else (another person, a question) is taken."""

from __future__ import annotations

from datetime import UTC

import pytest

from bot.chat.answers import match_choice
from bot.meetings.zones import button_label
from tests.meetings.conftest import GUEST, OWNER_CHAT, SECOND_GUEST, DeskFactory

OFFER = ["Tue 3 Mar 10:00", "Tue 3 Mar 10:30", "Wed 4 Mar 09:00", "None of these"]


@pytest.mark.parametrize(("typed", "meant"), [
    ("2", "Tue 3 Mar 10:30"), ("the second one", "Tue 3 Mar 10:30"), ("2nd", "Tue 3 Mar 10:30"),
    ("I'll take the first one", "Tue 3 Mar 10:00"), ("the last one", "Wed 4 Mar 09:00"),
    ("Tuesday 10:00", "Tue 3 Mar 10:00"), ("10.30", "Tue 3 Mar 10:30"),
    ("Wednesday at 9", "Wed 4 Mar 09:00"), ("tue 3 mar 10am", "Tue 3 Mar 10:00"),
    ("wed", "Wed 4 Mar 09:00"), ("none of these", "None of these"), ("neither", "None of these"),
    ("Tue 3 Mar 10:30", "Tue 3 Mar 10:30"),
    # not exactly one option: no answer (the text goes to the chat as any message)
    ("tue", None), ("3 mar", None), ("5", None), ("Tuesday 10:00 or 10:30", None),
    ("can we do thursday?", None), ("how about 11:00", None), ("the one", None), ("", None),
])
def test_typed_words_name_one_offered_time_or_none(typed: str, meant: str | None) -> None:
    assert match_choice(OFFER, typed) == meant


async def test_a_guest_types_the_second_one_and_it_is_held_and_asked_like_a_press(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    second = offer.buttons[1].label
    decisions = desk.app.chat.decisions
    assert await decisions.answer_typed("telegram", GUEST, GUEST, "t1",
                                        "can we do thursday instead?") is None
    assert await decisions.answer_typed("telegram", GUEST, SECOND_GUEST, "t2", "2") is None
    reply = await decisions.answer_typed("telegram", GUEST, GUEST, "t3", "the second one")
    assert reply is not None and reply.text.startswith("Held for you:")
    [meeting] = desk.app.meetings.store.listing()
    assert meeting.status == "held" and meeting.slot is not None
    assert button_label(meeting.slot.start, UTC) == second  # the second time offered, not another
    assert any(b.label == "Approve" for b in desk.adapter.last_buttons(OWNER_CHAT))
    assert await decisions.answer_typed("telegram", GUEST, GUEST, "t4", "2") is None  # taken


async def test_a_guest_types_none_of_these_and_gets_the_next_times(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    reply = await desk.app.chat.decisions.answer_typed("telegram", GUEST, GUEST, "t1",
                                                          "none of these")
    assert reply is not None and [b.label for b in reply.buttons][-1] == "None of these"
    assert reply.buttons[0].label not in [b.label for b in offer.buttons]


async def test_a_typed_pick_in_the_chat_reaches_the_offer_through_the_gateway(
        make_desk: DeskFactory) -> None:
    desk = await make_desk()
    offer = await desk.send("/meet budget")
    reply = await desk.send("3")
    assert reply.text.startswith("Held for you:")
    [meeting] = desk.app.meetings.store.listing()
    assert meeting.slot is not None
    assert button_label(meeting.slot.start, UTC) == offer.buttons[2].label
    other = await desk.send("3", user=SECOND_GUEST)  # not theirs: an ordinary message
    assert not other.text.startswith("Held for you:")

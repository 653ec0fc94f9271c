"""Other people stay in their own scope; hostile or odd input gets an answer, never a crash."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.chat.decisions import NOT_OWNER
from tests.support.harness import (
    GUEST,
    OWNER,
    OWNER_CHAT,
    Harness,
    HarnessFactory,
    event_around_now,
)

SECRET = "the safe code is 4711"


async def test_a_guest_cannot_read_the_owners_notes(harness: Harness) -> None:
    harness.services.memory.add("owner", SECRET)
    harness.big.enqueue(tool_calls=[("search_notes", {"query": "safe code"})])
    harness.big.enqueue(text="I found nothing.")
    reply = await harness.send("what is the safe code?", GUEST)
    assert (reply.route, reply.text) == ("full_agent", "I found nothing.")
    first, second = harness.big.history
    assert all("4711" not in m.content for m in first.messages)  # not pre-loaded either
    assert second.messages[-1].role == "tool" and "4711" not in second.messages[-1].content
    notes = await harness.send("/notes", GUEST)
    assert "4711" not in notes.text


async def test_a_guests_note_lands_in_their_own_scope(harness: Harness) -> None:
    owner_note = harness.services.memory.add("owner", SECRET)
    harness.big.enqueue(tool_calls=[("remember", {"text": "my parking spot is B12"})])
    harness.big.enqueue(text="Saved.")
    await harness.send("remember that my parking spot is B12", GUEST)
    memory = harness.services.memory
    assert [n.text for n in memory.recent(f"telegram:{GUEST}")] == ["my parking spot is B12"]
    assert [n.text for n in memory.recent("owner")] == [SECRET]
    forget = await harness.send(f"/forget {owner_note}", GUEST)
    assert forget.text == f"You have no note #{owner_note}."
    assert [n.id for n in memory.recent("owner")] == [owner_note]


async def test_a_guest_cannot_start_a_draft(harness: Harness) -> None:
    reply = await harness.send("/draft a press release", GUEST)
    assert (reply.route, reply.text, reply.run_id) == ("command", NOT_OWNER, None)
    assert harness.services.flows.store.runs() == []
    assert harness.small.history == [] and harness.big.history == []


async def test_a_guests_tools_reach_no_one_but_the_owner(harness: Harness) -> None:
    harness.big.enqueue(tool_calls=[("notify_owner", {"message": "Bob needs the keys"}),
                                    ("send_message", {"to": "alice", "text": "hi"})])
    harness.big.enqueue(text="Done what I could.")
    await harness.send("tell everyone the meeting moved to 3", GUEST)
    assert {chat for chat, _ in harness.adapter.sent} == {OWNER_CHAT, GUEST}
    results = [m.content for m in harness.big.history[1].messages if m.role == "tool"]
    assert "passed your message on" in results[0] and "send_message" in results[1]


async def test_a_guest_sees_the_calendar_as_free_busy_only(make_harness: HarnessFactory,
                                                           home: Path) -> None:
    home.mkdir(parents=True)
    ics = event_around_now(home / "cal.ics", "Divorce lawyer")
    h = await make_harness(FRONTDESK_CALENDAR=str(ics))
    h.big.enqueue(tool_calls=[("agenda", {"hours": 0})])
    h.big.enqueue(text="The owner is busy now.")
    await h.send("is the owner free now?", GUEST)
    first, second = h.big.history
    context = first.messages[0].content
    assert "busy" in context and "Divorce lawyer" not in context
    tool_result = second.messages[-1].content
    assert "busy" in tool_result and "Divorce lawyer" not in tool_result

    await h.send("what's on my agenda today?")
    assert "Divorce lawyer" in h.big.history[2].messages[0].content  # the owner sees titles


@pytest.mark.parametrize("text", [
    "x" * 200_000,
    "what " + "dentist " * 20_000 + "?",
    '"unbalanced AND (NEAR OR * ^ col:x?',
    "NEAR(dentist friday)?", "dentist*?", "-dentist?", "^dentist OR?",
    "\u202eevil\u200b right-to-left?", "👩‍👩‍👧‍👦 é̃̂ ﷽ 𝕳𝖊𝖑𝖑𝖔", "nul\x00byte?",
    "\ud800 a lone surrogate?", "   ", "/", "/forget abc", "/forget 99999999999999999999999",
    "/" + "a" * 5000, "/help@someotherbot",
], ids=lambda text: repr(text[:20]))
async def test_odd_input_gets_an_answer(harness: Harness, text: str) -> None:
    harness.services.memory.add("owner", "the dentist is Friday")
    reply = await harness.gateway.handle(harness.message(text, message_id="odd"))
    assert reply is not None
    assert reply.route in {"quick_reply", "full_agent", "command"} or (
        reply.route == "refused" and len(text) > 16_000 and "too long" in reply.text)
    assert reply.text
    assert harness.services.delivery.inbox.status("telegram", OWNER, "odd") == "answered"
    assert "".join(harness.adapter.to(OWNER)) == reply.text

"""Reminders through the whole gateway on an injected clock: set, listed, fired once, traced."""

from __future__ import annotations

from bot.adapters.telegram.markdown import markdown_to_html
from tests.reminders.conftest import GUEST, OWNER, DeskFactory, berlin

NOON = berlin(2025, 12, 1, 12, 0)  # Monday


async def test_a_reminder_is_confirmed_with_its_local_time_and_fires_once_on_time(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    reply = await desk.send("remind me at 17:00 to call Ann")
    assert "I'll remind you on Mon 1 Dec at 17:00: call Ann" in reply.text
    desk.adapter.sent.clear()
    desk.at(berlin(2025, 12, 1, 16, 59, 59))
    assert await desk.services.timer.tick() == []
    desk.at(berlin(2025, 12, 1, 17, 0))
    [fired] = await desk.services.timer.tick()
    assert await desk.services.timer.tick() == []  # once
    assert desk.adapter.sent == [(OWNER, "⏰ Reminder: call Ann")]
    run = desk.services.flows.store.run(f"reminder-{fired.id}-" + _digest(fired.occurrence_key))
    assert run is not None and run.workflow == "reminder" and run.status == "completed"
    events = desk.services.flows.store.events(run.id)
    story = [e["event"] + ":" + str(e.get("node", "")) for e in events]
    assert "node_end:send" in story  # a trace, as frontdesk runs shows it
    assert desk.services.reminders.store.pending() == []


async def test_a_guests_reminder_stays_in_the_guests_chat_and_scope(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    mine = await desk.send("remind me in 10 minutes to stretch", user=GUEST)
    assert "Mon 1 Dec at 12:10" in mine.text
    await desk.send("remind me in 20 minutes to water the plants", user=GUEST, chat="group-1")
    await desk.send("remind me in 10 minutes to call the bank")  # the owner's
    listed = await desk.send("/reminders", user=GUEST)
    [line] = listed.text.splitlines()[1:]
    assert line.endswith("Mon 1 Dec 12:10 stretch") and line.split()[0].isdigit()
    owners = desk.services.reminders.store.pending("telegram", OWNER)
    refused = await desk.send(f"/reminders cancel {owners[0].id}", user=GUEST)
    assert refused.text == f"You have no pending reminder {owners[0].id}."
    desk.adapter.sent.clear()
    desk.at(berlin(2025, 12, 1, 12, 30))
    assert len(await desk.services.timer.tick()) == 3
    assert desk.adapter.to(GUEST) == ["⏰ Reminder: stretch"]
    assert desk.adapter.to("group-1") == ["⏰ Reminder: water the plants"]
    assert desk.adapter.to(OWNER) == ["⏰ Reminder: call the bank"]
    guest_runs = [r for r in desk.services.flows.store.runs(50) if r.workflow == "reminder"
                  and r.meta.get("user") == f"telegram:{GUEST}"]
    assert len(guest_runs) == 2


async def test_reminders_lists_cancels_and_says_when_empty(make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    assert "No reminders are pending in this chat" in (await desk.send("/reminders")).text
    await desk.send("every Monday at 9 remind me to plan the week")
    listed = (await desk.send("/reminders")).text
    reminder = desk.services.reminders.store.pending()[0]
    assert listed.splitlines()[1] == f"{reminder.id} Mon 8 Dec 09:00 plan the week (repeats)"
    cancelled = await desk.send(f"/reminders cancel {reminder.id}")
    assert cancelled.text == f"Cancelled reminder {reminder.id}."
    desk.at(berlin(2025, 12, 8, 9, 0))
    assert await desk.services.timer.tick() == []


async def test_past_and_unreadable_times_get_a_question_back(make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    assert "has already passed. When should I remind you" in (
        await desk.send("remind me at 11:00 to call Ann")).text
    assert "couldn't tell when" in (await desk.send("remind me someday to call Ann")).text
    assert desk.services.reminders.store.pending() == []


async def test_missed_while_down_is_sent_once_at_start_marked_late(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    await desk.send("remind me in 10 minutes to stretch")
    later = await make_desk(berlin(2025, 12, 1, 12, 10, 1))  # a restart one second past it
    [fired] = await later.services.timer.tick()
    assert later.adapter.to(OWNER) == ["⏰ Reminder: stretch (late: due 12:10)"]
    assert fired.status == "pending" and later.services.reminders.store.pending() == []


async def test_the_owners_recurring_task_runs_its_prompt_through_the_agent(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    reply = await desk.send("every weekday at 8:30 send me my agenda")
    assert "I'll do this on Tue 2 Dec at 08:30" in reply.text
    desk.adapter.sent.clear()
    for day in (2, 3):
        desk.at(berlin(2025, 12, day, 8, 30))
        await desk.services.timer.tick()
    agenda = "Your agenda:\nNo calendar is configured.\n(offline mode)"  # the agent's answer
    assert desk.adapter.to(OWNER) == [agenda] * 2
    [task] = desk.services.reminders.store.pending()
    assert task.due_local == "2025-12-04T08:30:00+01:00"
    guest = await desk.send("every weekday at 8:30 send me my agenda", user=GUEST)
    assert "I'll remind you" in guest.text  # a guest's task repeats its text, no agent run


def _digest(key: str) -> str:
    import hashlib

    return hashlib.sha256(key.encode()).hexdigest()[:16]


async def test_a_guests_reminder_shows_their_words_literally_when_it_fires(
        make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    await desk.send("remind me in 10 minutes to open [click](https://evil.example) now",
                    user=GUEST)
    desk.adapter.sent.clear()
    desk.at(berlin(2025, 12, 1, 12, 10))
    assert len(await desk.services.timer.tick()) == 1
    [sent] = desk.adapter.to(GUEST)
    html = markdown_to_html(sent)  # what Telegram shows: the guest's words, no live link
    assert "<a " not in html and "[click](https://evil.example)" in html


async def test_the_chat_lists_show_a_guests_words_literally(make_desk: DeskFactory) -> None:
    desk = await make_desk(NOON)
    await desk.send("remind me in 10 minutes to open [click](https://evil.example)", user=GUEST)
    await desk.send("remember that [this](https://evil.example) is **bold**", user=GUEST)
    for listing in ("/reminders", "/notes"):
        html = markdown_to_html((await desk.send(listing, user=GUEST)).text)
        assert "<a " not in html and "<b>" not in html, listing
        assert "[click](https://evil.example)" in html or "**bold**" in html, listing

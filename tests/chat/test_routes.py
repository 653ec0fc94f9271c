"""Every route of a message through the gateway, asserted as the story its run recorded."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path

from bot.access.pairing import REFUSAL
from bot.calendar.ics import AgendaResult, Calendar
from bot.chat.commands import HELP_TEXT
from tests.support.harness import (
    GUEST,
    OWNER,
    OWNER_CHAT,
    STRANGER,
    Harness,
    HarnessFactory,
    PurposeModel,
    event_around_now,
)

# What the two parallel branches record, in whichever order they interleave.
FETCHES = ["node_start:classify_intent", "node_start:check_calendar",
           "model_call:small:classify", "node_end:classify_intent", "node_end:check_calendar"]


# The agent's first turn started while classify runs, when the rules expect full_agent.
EARLY = ["speculation:started", "model_call:big:agent:speculative"]


def assert_triage_story(story: list[str], ending: list[str], *,
                        speculated: bool = False) -> None:
    """START, both fetches (any interleaving), then gather and exactly ``ending``; with
    ``speculated``, the early first turn started once the calendar was read, whenever it
    ended (its outcome is in ``ending``)."""
    assert [s for s in story if s in EARLY] == (EARLY if speculated else [])
    if speculated:
        assert story.index("node_end:check_calendar") > story.index("speculation:started")
        assert story.index("node_start:check_calendar") < story.index("speculation:started")
    story = [s for s in story if s not in EARLY]
    assert story[0] == "graph_start"
    assert sorted(story[1:1 + len(FETCHES)]) == sorted(FETCHES)
    assert story.index("node_start:classify_intent") < story.index("node_end:classify_intent")
    assert story[1 + len(FETCHES):] == ["node_start:gather", "node_end:gather", *ending,
                                        "graph_end:completed"]


def wrote_by(h: Harness, run_id: str | None, node: str) -> list[list[str]]:
    """The keys ``node`` wrote, per time it ended, in the run's trace."""
    return [e["wrote"] for e in h.services.flows.store.events(run_id or "")
            if e["event"] == "node_end" and e.get("node") == node]


async def test_social_message_gets_a_quick_reply_without_the_big_model(harness: Harness) -> None:
    reply = await harness.send("hi there!")
    assert (reply.route, reply.text) == ("quick_reply", "quick: hi there!")
    assert reply.model_calls == {"small": 1, "big": 0}  # the classify call carried the answer
    assert harness.big.history == []
    assert harness.small.purposes() == ["classify"]
    assert_triage_story(harness.story(reply.run_id), [
        "route:quick_reply", "node_start:quick_reply", "node_end:quick_reply"])
    assert wrote_by(harness, reply.run_id, "quick_reply") == [["reply", "reply_from"]]
    assert harness.adapter.sent == [(OWNER, "quick: hi there!")]


async def test_a_greeting_is_answered_with_the_reply_from_the_classify_json(
        harness: Harness) -> None:
    harness.small.enqueue(text='Sure: {"intent": "social", "urgency": 0.05, '
                               '"reply": "  Good morning to you too!  "}')
    reply = await harness.send("good morning")
    assert (reply.route, reply.text) == ("quick_reply", "Good morning to you too!")
    assert reply.model_calls == {"small": 1, "big": 0}
    assert len(harness.small.history) == 1 and harness.big.history == []
    assert wrote_by(harness, reply.run_id, "classify_intent") == [
        ["intent", "urgency", "classified_by", "social_reply"]]
    assert harness.adapter.sent == [(OWNER, "Good morning to you too!")]


async def test_a_model_that_leaves_out_the_reply_costs_a_second_small_call(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(small=PurposeModel("small", reply_in_classify=False))
    reply = await h.send("hi there!")
    assert (reply.route, reply.text) == ("quick_reply", "quick: hi there!")
    assert reply.model_calls == {"small": 2, "big": 0}
    assert h.big.history == []
    assert h.small.purposes() == ["classify", "quick_reply"]
    assert_triage_story(h.story(reply.run_id), [
        "route:quick_reply", "node_start:quick_reply", "model_call:small:quick_reply",
        "node_end:quick_reply"])
    assert wrote_by(h, reply.run_id, "quick_reply") == [["reply"]]
    assert h.adapter.sent == [(OWNER, "quick: hi there!")]


async def test_an_empty_reply_in_the_classify_json_costs_a_second_small_call(
        harness: Harness) -> None:
    harness.small.enqueue(text='{"intent": "social", "urgency": 0.1, "reply": " "}')
    reply = await harness.send("thanks!")
    assert (reply.route, reply.text) == ("quick_reply", "quick: thanks!")
    assert harness.small.purposes() == ["classify", "quick_reply"] and harness.big.history == []


async def test_a_reply_written_for_a_question_is_ignored_and_the_big_model_answers(
        harness: Harness) -> None:
    harness.small.enqueue(text='{"intent": "question", "urgency": 0.2, "reply": "No idea!"}')
    reply = await harness.send("what time is the dentist?")
    assert (reply.route, reply.text) == ("full_agent", "agent: what time is the dentist?")
    assert reply.model_calls == {"small": 1, "big": 1}
    assert harness.big.purposes() == ["agent"]
    assert wrote_by(harness, reply.run_id, "classify_intent") == [
        ["intent", "urgency", "classified_by"]]


async def test_a_social_answer_from_the_offline_stand_in_is_not_kept(
        make_harness: HarnessFactory) -> None:
    # The provider was down: the offline assistant answered the classify call without saying
    # why, so the quick reply asks again and its fallback reply carries the reason.
    small = PurposeModel("small")
    small.provider = "offline"  # so the scripted reply says the offline assistant gave it
    small.enqueue(text='{"intent": "social", "urgency": 0.1, "reply": "Hi! (offline mode)"}')
    small.provider = "fake"
    h = await make_harness(small=small)
    reply = await h.send("hello")
    assert (reply.route, reply.text) == ("quick_reply", "quick: hello")
    assert h.small.purposes() == ["classify", "quick_reply"] and h.big.history == []


async def test_task_goes_to_the_agent_which_uses_tools(harness: Harness) -> None:
    harness.big.enqueue(tool_calls=[("remember", {"text": "the dentist is Friday 3pm"})])
    harness.big.enqueue(text="Noted: dentist on Friday at 3pm.")
    reply = await harness.send("remember that the dentist is Friday 3pm")
    assert (reply.route, reply.text) == ("full_agent", "Noted: dentist on Friday at 3pm.")
    assert reply.model_calls == {"small": 1, "big": 2}
    assert_triage_story(harness.story(reply.run_id), [
        "route:full_agent", "node_start:full_agent", "speculation:adopted",
        "tool_call:remember", "model_call:big:agent", "loop_end:final_answer",
        "node_end:full_agent"], speculated=True)
    assert [n.text for n in harness.services.memory.recent("owner")] == [
        "the dentist is Friday 3pm"]


async def test_question_is_answered_with_memory_hits_in_the_agents_context(
        harness: Harness) -> None:
    harness.services.memory.add("owner", "the dentist is Friday 3pm")
    reply = await harness.send("when is the dentist?")
    assert reply.route == "full_agent"
    system = harness.big.history[0].messages[0]
    assert system.role == "system" and "the dentist is Friday 3pm" in system.content


async def test_urgent_message_from_a_guest_reaches_the_owner_now(harness: Harness) -> None:
    reply = await harness.send("urgent: the server is down", GUEST, name="bob")
    assert reply.route == "notify_now"
    assert "passed your message on to the owner" in reply.text
    assert reply.model_calls == {"small": 1, "big": 0}
    assert_triage_story(harness.story(reply.run_id), [
        "route:notify_now", "node_start:notify_now", "node_end:notify_now"])
    [notice] = harness.adapter.to(OWNER_CHAT)
    assert "urgent: the server is down" in notice and GUEST in notice
    assert harness.adapter.to(GUEST) == [reply.text]
    assert harness.adapter.sent.index((OWNER_CHAT, notice)) < harness.adapter.sent.index(
        (GUEST, reply.text))  # the owner hears first


async def test_the_same_urgent_text_sent_twice_reaches_the_owner_twice(harness: Harness) -> None:
    for _ in range(2):
        reply = await harness.send("urgent: call me back", GUEST)
        assert reply.route == "notify_now"
    assert len(harness.adapter.to(OWNER_CHAT)) == 2  # the sender was told so both times


async def test_urgent_message_from_the_owner_goes_to_the_agent(harness: Harness) -> None:
    reply = await harness.send("urgent: call the plumber")
    assert reply.route == "full_agent"
    assert harness.adapter.to(OWNER_CHAT) == []


async def test_classifier_reply_that_does_not_parse_falls_back_to_the_rules(
        harness: Harness) -> None:
    harness.small.enqueue(text="I think this is probably social?")
    reply = await harness.send("thanks a lot!")
    assert reply.route == "quick_reply"
    run = harness.services.flows.store.events(reply.run_id or "")
    assert [e["wrote"] for e in run if e.get("node") == "classify_intent"
            and e["event"] == "node_end"] == [["intent", "urgency", "classified_by"]]
    assert reply.text == "quick: thanks a lot!"  # still answered, by the second small call
    assert harness.small.purposes() == ["classify", "quick_reply"]
    assert harness.big.history == []


async def test_graph_mode_off_sends_everything_to_the_loop(make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GRAPH_WORKFLOWS="0")
    for text in ("hi there!", "remember milk", "what is on today?"):
        reply = await h.send(text)
        assert (reply.route, reply.text) == ("loop", f"agent: {text}")
        assert h.story(reply.run_id) == ["graph_start", "node_start:loop",
                                         "model_call:big:agent", "loop_end:final_answer",
                                         "node_end:loop",
                                         "graph_end:completed"]
    assert h.small.history == []


async def test_graph_mode_off_urgent_guest_message_reaches_owner_through_the_tool(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GRAPH_WORKFLOWS="0")
    h.big.enqueue(tool_calls=[("notify_owner", {"message": "Bob: the server is down"})])
    h.big.enqueue(text="I've told the owner.")
    reply = await h.send("urgent: the server is down", GUEST)
    assert (reply.route, reply.text) == ("loop", "I've told the owner.")
    assert "tool_call:notify_owner" in h.story(reply.run_id)
    [notice] = h.adapter.to(OWNER_CHAT)
    assert "Bob: the server is down" in notice
    offered = {spec.name for spec in h.big.history[0].tools or []}
    assert "notify_owner" in offered


async def test_graph_mode_off_the_same_urgent_words_twice_reach_the_owner_twice(
        make_harness: HarnessFactory) -> None:
    h = await make_harness(FRONTDESK_GRAPH_WORKFLOWS="0")
    for _ in range(2):
        h.big.enqueue(tool_calls=[("notify_owner", {"message": "Bob: call me back"})])
        h.big.enqueue(text="I've told the owner.")
        await h.send("urgent: call me back", GUEST)
    assert len(h.adapter.to(OWNER_CHAT)) == 2  # through the notify_owner tool, each time


async def test_chat_commands_are_answered_without_a_run(harness: Harness) -> None:
    reply = await harness.send("/help")
    assert (reply.route, reply.text, reply.run_id) == ("command", HELP_TEXT, None)
    assert reply.model_calls == {"small": 0, "big": 0}
    harness.services.memory.add("owner", "buy oat milk")
    notes = await harness.send("/notes")
    assert notes.route == "command" and "buy oat milk" in notes.text
    unknown = await harness.send("/frobnicate now")
    assert unknown.route == "command" and "/help" in unknown.text
    assert harness.small.history == [] and harness.big.history == []
    assert harness.services.flows.store.runs() == []


async def test_unknown_user_is_refused_once_per_chat_without_a_model_call(
        harness: Harness) -> None:
    first = await harness.gateway.handle(harness.message("hello?", STRANGER, message_id="s1"))
    assert first is not None and (first.route, first.text) == ("refused", REFUSAL)
    again = await harness.gateway.handle(harness.message("hello??", STRANGER))
    assert again is None
    other_chat = await harness.gateway.handle(harness.message("hi", STRANGER, chat="group-1"))
    assert other_chat is not None and other_chat.route == "refused"
    assert harness.adapter.sent == [(STRANGER, REFUSAL), ("group-1", REFUSAL)]
    assert harness.small.history == [] and harness.big.history == []
    assert harness.services.flows.store.runs() == []
    inbox = harness.services.delivery.inbox
    assert inbox.status("telegram", STRANGER, "s1") is None  # not in the inbox


class SlowCalendar(Calendar):
    """A real calendar whose reading takes 0.2 s of (simulated) work."""

    def events(self, start: datetime, end: datetime) -> AgendaResult:
        time.sleep(0.2)  # work done in check_calendar's worker thread, not a wait in the test
        return super().events(start, end)


async def test_classify_and_calendar_overlap_in_the_trace(make_harness: HarnessFactory,
                                                          home: Path) -> None:
    ics = event_around_now(home.parent / "cal.ics", "Standup")
    h = await make_harness(small=PurposeModel("small", delay_s=0.2),
                           calendar=SlowCalendar(str(ics), tz="UTC", cache_dir=home / "cache"))
    reply = await h.send("hey!")
    assert reply.route == "quick_reply"
    events = h.services.flows.store.events(reply.run_id or "")
    span = {e["node"]: [e["t"], 0.0] for e in events if e["event"] == "node_start"}
    for e in events:
        if e["event"] == "node_end":
            span[e["node"]][1] = e["t"]
    classify, calendar = span["classify_intent"], span["check_calendar"]
    assert classify[1] - classify[0] >= 0.2 and calendar[1] - calendar[0] >= 0.2
    assert classify[0] < calendar[1] and calendar[0] < classify[1]  # the intervals overlap
    both = (classify[1] - classify[0]) + (calendar[1] - calendar[0])
    assert span["gather"][0] - min(classify[0], calendar[0]) < both  # not one after the other

"""The offline provider's rules: intents, quick replies, an agent that uses tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.models import OfflineModel, classify_offline, parse_intent
from bot.schema import open_database
from bot.tools.builtin import build_tools
from bot.tools.loop import run_loop
from bot.tools.registry import Caller, ToolRegistry
from memory.notes import Memory
from tests.support.models import GUEST, OWNER, Events, contract_tools


@pytest.mark.parametrize(("text", "intent"), [
    ("This is URGENT, the server is down", "urgent"),
    ("can you call me asap", "urgent"),
    ("Emergency at the office?", "urgent"),  # urgent wins over question
    ("I need this right now", "urgent"),
    ("Hi there!", "social"),
    ("thanks so much :)", "social"),
    ("Good night, see you soon", "social"),
    ("hey, how are you?", "social"),
    ("What's on my calendar", "question"),
    ("the report is ready?", "question"),
    ("Hello, where is the invoice", "question"),
    ("Book a table for two at 8", "task"),
    ("thanks, and please send the invoice to Bob", "task"),
    ("", "task"),
    # plain phrasing the first rules missed
    ("Thank you, that helped", "social"),
    ("bye, talk later", "social"),
    ("ok cool", "social"),
    ("lol nice", "social"),
    ("Hallo, wie geht's?", "social"),
    ("Need him urgently on the phone", "urgent"),
    ("Fire alarm in the building", "urgent"),
    ("The water pipe burst, come home now", "urgent"),
    ("Server is down and customers are complaining", "urgent"),
    ("Not urgent, but please renew the domain", "task"),  # said not to be urgent
    ("What's the emergency number in Spain?", "question"),  # about emergencies, not one
    ("Fire off a quick reply to Tom", "task"),
])
def test_offline_intents(text: str, intent: str) -> None:
    assert classify_offline(text)[0] == intent


@pytest.mark.parametrize("text", [
    "hi, can you move my meeting?",  # a greeting with a request is not social
    "thanks, and can you remind me to call Bob",  # a request is never social
])
def test_a_request_goes_to_the_agent_whatever_comes_with_it(text: str) -> None:
    assert classify_offline(text)[0] in {"question", "task"}


def test_only_urgent_reaches_the_notify_threshold() -> None:
    urgency = {intent: classify_offline(text)[1] for text, intent in [
        ("asap please", "urgent"), ("hello", "social"), ("why?", "question"),
        ("do it", "task")]}
    assert urgency["urgent"] >= 0.8
    assert all(value < 0.8 for key, value in urgency.items() if key != "urgent")


async def test_classify_purpose_answers_json_for_the_last_user_message(events: Events) -> None:
    model = OfflineModel()
    reply = await model.complete([{"role": "user", "content": "hello"},
                                  {"role": "assistant", "content": "Hi!"},
                                  {"role": "user", "content": "where are my keys?"}],
                                 purpose="classify", observer=events)
    assert json.loads(reply.text) == {"intent": "question", "urgency": 0.3}
    assert reply.provider == "offline" and reply.cost_usd == 0.0
    assert events.of("model_call")[0]["provider"] == "offline"


@pytest.mark.parametrize(("text", "intent"), [
    ("thank you!", "social"), ("hello", "social"), ("bye bye", "social"), ("ok cool", "social")])
async def test_classify_json_carries_the_quick_reply_of_a_social_message(
        text: str, intent: str) -> None:
    model = OfflineModel()
    classified = await model.complete([{"role": "user", "content": text}], purpose="classify")
    quick = await model.complete([{"role": "user", "content": text}], purpose="quick_reply")
    assert json.loads(classified.text) == {"intent": intent, "urgency": 0.1,
                                           "reply": quick.text}


@pytest.mark.parametrize("text", ["urgent: the server is down", "remember milk", "why?"])
async def test_classify_json_of_other_intents_has_no_reply(text: str) -> None:
    reply = await OfflineModel().complete([{"role": "user", "content": text}],
                                          purpose="classify")
    assert "reply" not in json.loads(reply.text)


@pytest.mark.parametrize(("text", "expected"), [
    ("thank you!", "You're welcome! (offline mode)"),
    ("bye bye", "Goodbye, talk soon! (offline mode)"),
    ("hello", "Hello! I'm in offline mode right now, but I can still save notes, read your "
              "agenda and search your notes."),
    ("Danke, das hat geholfen", "You're welcome! (offline mode)"),
    ("À plus tard", "Goodbye, talk soon! (offline mode)"),
    ("ok cool", "Got it. (offline mode)"),
])
async def test_quick_replies_from_templates(text: str, expected: str) -> None:
    reply = await OfflineModel().complete([{"role": "user", "content": text}],
                                          purpose="quick_reply")
    assert reply.text == expected


@pytest.mark.parametrize(("text", "tool", "arguments", "answer_part"), [
    ("Remember that the wifi password is on the fridge", "remember",
     {"text": "the wifi password is on the fridge", "scope": "owner"},
     "Saved to your notes: the wifi password is on the fridge"),
    ("note that Bob likes tea", "remember", {"text": "Bob likes tea", "scope": "owner"},
     "Saved to your notes: Bob likes tea"),
    ("what's on my schedule this week", "agenda", {"hours": 168},
     "Your agenda:\n10:00 Dentist"),
    ("any meetings tomorrow", "agenda", {"hours": 48}, "Your agenda:"),
    ("where did I put the wifi password?", "search_notes",
     {"query": "where did I put the wifi password?", "scope": "owner"},
     "From your notes:\n#4 The wifi password is on the fridge"),
])
async def test_agent_rules_act_through_the_real_loop(text: str, tool: str,
                                                     arguments: dict[str, object],
                                                     answer_part: str) -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(OfflineModel(role="big"), [{"role": "user", "content": text}],
                            contract_tools(calls), OWNER)
    assert calls == [(tool, arguments)]
    assert answer_part in result.text and result.text.endswith("(offline mode)")
    assert result.iterations == 2


async def test_urgent_message_in_the_plain_loop_notifies_the_owner() -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(OfflineModel(), [{"role": "user", "content": "Call me ASAP!"}],
                            contract_tools(calls), GUEST)
    assert calls == [("notify_owner", {"message": "Call me ASAP!"})]
    assert result.text.startswith("I've let the owner know.")


async def test_anything_else_gets_the_offline_capabilities_and_no_tool() -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(OfflineModel(), [{"role": "user", "content": "Write me a poem"}],
                            contract_tools(calls), OWNER)
    assert calls == [] and result.iterations == 1
    assert "offline mode" in result.text and "remember" in result.text


@pytest.mark.parametrize("text", ["what can you do?", "Who are you?", "help?", "are you a bot?",
                                  "Was kannst du?", "qu'est-ce que tu peux faire ?",
                                  "how does this work?"])
async def test_a_question_about_the_assistant_says_what_it_can_do(text: str) -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(OfflineModel(role="big"), [{"role": "user", "content": text}],
                            contract_tools(calls), GUEST)
    assert calls == []  # no note search for a question about the assistant
    assert "From your notes" not in result.text
    for capability in ("remember", "remind me", "agenda", "urgent", "/help"):
        assert capability in result.text


async def test_a_question_no_note_answers_says_what_it_can_do(tmp_path: Path) -> None:
    memory = Memory(open_database(tmp_path / "frontdesk.db"))
    memory.add("owner", "Wifi password: sunflower22")

    async def notify(caller: Caller, text: str) -> str:
        return "sent"

    tools = build_tools(memory, None, notify)
    unanswered = await run_loop(OfflineModel(role="big"),
                                [{"role": "user", "content": "when does the bakery open?"}],
                                tools, OWNER)
    assert "No matching notes" not in unanswered.text
    assert unanswered.text.startswith("I have no note that answers that.")
    assert "remind me" in unanswered.text and "/help" in unanswered.text
    answered = await run_loop(OfflineModel(role="big"),
                              [{"role": "user", "content": "what's the wifi password?"}],
                              tools, OWNER)
    assert answered.text.startswith("From your notes:") and "sunflower22" in answered.text


async def test_only_offered_tools_are_called() -> None:
    only_agenda = ToolRegistry()

    def agenda(hours: float) -> str:
        """Agenda."""
        return f"nothing in the next {hours:g} hours"

    only_agenda.register(agenda)
    result = await run_loop(OfflineModel(), [{"role": "user", "content": "remember to buy eggs"}],
                            only_agenda, OWNER)
    assert result.iterations == 1 and "offline mode" in result.text  # no remember tool offered
    question = await run_loop(OfflineModel(), [{"role": "user", "content": "who is Bob?"}],
                              only_agenda, OWNER)
    assert question.tool_calls == 0


async def test_a_refused_tool_result_is_reported_not_saved() -> None:
    registry = ToolRegistry()

    def remember(text: str) -> str:
        """Save a note."""
        return "saved"

    registry.register(remember, owner_only=True)
    # the guest is not offered remember, so the offline agent does not try it
    result = await run_loop(OfflineModel(), [{"role": "user", "content": "remember X"}],
                            registry, GUEST)
    assert result.tool_calls == 0


@pytest.mark.parametrize(("reply", "text", "expected"), [
    ('{"intent": "task", "urgency": 0.2}', "hello", ("task", 0.2)),
    ('Here you go: {"intent": "urgent", "urgency": 1}', "hello", ("urgent", 1.0)),
    ("I think it is a question", "where are my keys?", ("question", 0.3)),
    ('{"intent": "question"}', "hi", ("social", 0.1)),
    ('{"intent": "question", "urgency": "high"}', "hi", ("social", 0.1)),
])
def test_parse_intent_falls_back_to_the_offline_rules(reply: str, text: str,
                                                      expected: tuple[str, float]) -> None:
    assert parse_intent(reply, text) == expected

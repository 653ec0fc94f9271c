"""Triage's speculative first turn: started while classify runs, adopted by full_agent,
cancelled (and counted) on any other route, never started for what the rules take for social,
and never the cause of a tool's side effect."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bot.models.costs import SpendLog
from bot.schema import open_database
from bot.tools.loop import run_loop
from bot.tools.registry import caller_from_sender
from graphs import run_graph
from graphs.workflows.triage import TriageDeps, build
from tests.fakes.model import FakeModel
from tests.fakes.openai_server import FakeOpenAIServer, hung_reply, text_reply
from tests.fakes.scripted_server import RecordedRequest, ScriptedReply
from tests.support.models import PRICES, Events, SleepRecorder, contract_tools, openai_model

PROMPTS = {"classify": "Classify.", "quick_reply": "Reply briefly.", "agent": "You help."}
OWNER = {"scope": "owner", "is_owner": True, "platform": "console", "chat_id": "c1",
         "name": "Ann"}
GUEST = {"scope": "telegram:7", "is_owner": False, "platform": "telegram", "chat_id": "c7",
         "name": "Bob"}


def classified(intent: str, urgency: float = 0.1, reply: str = "") -> str:
    """The small model's JSON answer."""
    return json.dumps({"intent": intent, "urgency": urgency, "reply": reply})


def triage(small: Any, big: Any, *, rules: tuple[str, float], tools: Any = None,
           notices: list[str] | None = None) -> Any:
    """The triage graph with ``rules`` as the offline router's answer to every message."""
    told = notices if notices is not None else []

    async def notify(sender: dict[str, Any], text: str) -> str:
        told.append(text)
        return "Passed on."

    return build(TriageDeps(
        small=small, big=big, loop=run_loop, tools=tools or contract_tools(),
        make_caller=caller_from_sender, search_notes=lambda scope, query, k: [],
        read_calendar=lambda sender: "", notify_owner=notify,
        fallback_classify=lambda text: rules, prompts=PROMPTS))


async def run(graph: Any, text: str, sender: dict[str, Any] = OWNER) -> tuple[Any, Events]:
    events = Events()
    state = await run_graph(graph, {"text": text, "sender": sender, "history": []},
                            observer=events)
    return state, events


def at(events: Events, kind: str, **match: Any) -> list[dict[str, Any]]:
    """The events of one kind whose fields match."""
    return [e for e in events.of(kind) if all(e.get(k) == v for k, v in match.items())]


class Ordered(FakeModel):
    """A FakeModel noting, in a list shared with others, when each call is asked."""

    def __init__(self, role: str, asked: list[str]) -> None:
        super().__init__(role=role)
        self.asked = asked

    async def complete(self, messages: Any, **options: Any) -> Any:
        self.asked.append(f"{self.role}:{options.get('purpose')}")
        return await super().complete(messages, **options)


async def test_the_agents_first_turn_starts_while_classify_runs_and_is_adopted() -> None:
    asked: list[str] = []
    small, big = Ordered("small", asked), Ordered("big", asked)
    small.enqueue(classified("question"), delay_s=0.3)
    big.enqueue("The dentist is on Friday.", delay_s=0.6)
    state, events = await run(triage(small, big, rules=("question", 0.2)),
                              "when is the dentist?")
    assert (state["route"], state["reply"]) == ("full_agent", "The dentist is on Friday.")
    assert len(big.history) == 1  # the speculative call was the agent's first turn
    [started] = at(events, "speculation", outcome="started")
    [early] = at(events, "model_call", role="big", speculative=True)
    [classify_end] = at(events, "node_end", node="classify_intent")
    [agent_start] = at(events, "node_start", node="full_agent")
    # it started before classify ended, and was asked first (the longer request leaves first)
    assert started["t"] < classify_end["t"]
    assert early["t"] - early["duration_s"] < classify_end["t"] < early["t"]
    assert asked == ["big:agent", "small:classify"]
    assert early["node"] == "full_agent" and not early.get("cancelled")
    [adopted] = at(events, "speculation", outcome="adopted")
    assert adopted["t"] >= agent_start["t"]
    assert [e["outcome"] for e in events.of("speculation")] == ["started", "adopted"]


def misjudged(big_reply: ScriptedReply, small_json: str) -> Callable[[RecordedRequest],
                                                                    ScriptedReply]:
    """The fake provider: the small model answers ``small_json`` after 0.2 s, the big one
    ``big_reply``."""
    def respond(request: RecordedRequest) -> ScriptedReply:
        if (request.json or {}).get("model") == "gpt-4.1-mini":
            return ScriptedReply(text_reply(small_json).body, stall_s=0.2)
        return big_reply
    return respond


@pytest.mark.parametrize(("small_json", "sender", "route"), [
    (classified("social", 0.0, "Doing well, thanks!"), OWNER, "quick_reply"),
    (classified("urgent", 0.9), GUEST, "notify_now"),
])
async def test_a_turn_the_route_does_not_need_is_cancelled_and_counted_exactly(
        small_json: str, sender: dict[str, Any], route: str, tmp_path: Path) -> None:
    ledger, sleeps, notices = SpendLog(open_database(tmp_path / "f.db")), SleepRecorder(), []
    async with FakeOpenAIServer() as server:
        server.responder = misjudged(hung_reply(), small_json)  # the big model never answers
        # (a long time-out: the first request imports the SDK, slow on a busy machine)
        small = openai_model(server, sleeps, role="small", ledger=ledger, budget=1.0,
                             timeout=60)
        big = openai_model(server, sleeps, name="gpt-4.1", role="big", ledger=ledger,
                           budget=1.0, timeout=60)
        state, events = await run(triage(small, big, rules=("question", 0.2), notices=notices),
                                  "the usual, how is it going?", sender)
        big_requests = [r for r in server.requests if r.json["model"] == "gpt-4.1"]
        await small.aclose()
        await big.aclose()
    assert state["route"] == route
    assert len(big_requests) == 1  # it did reach the provider, speculatively
    assert len(notices) == (route == "notify_now")  # the owner is told all the same
    [cancelled] = at(events, "model_call", role="big", cancelled=True)
    assert cancelled["speculative"] and cancelled["node"] == "full_agent"
    # counted at the most it can have cost: the request's whole input bound and max_tokens
    assert cancelled["output_tokens"] == 1024 and cancelled["input_tokens"] > 0
    assert cancelled["cost_usd"] == pytest.approx(
        PRICES.cost("gpt-4.1", cancelled["input_tokens"], 1024))
    assert [e["outcome"] for e in events.of("speculation")] == ["started", "cancelled"]
    [gather_end] = at(events, "node_end", node="gather")
    assert cancelled["t"] <= gather_end["t"]  # counted before the run moved on
    # the hold became exactly that call: nothing is held, both calls are settled
    assert ledger.held() == 0.0
    by_model = {model: (calls, tokens_in, tokens_out, usd)
                for _, model, calls, tokens_in, tokens_out, usd in ledger.by_model()}
    assert by_model["gpt-4.1"] == (1, cancelled["input_tokens"], 1024,
                                   pytest.approx(cancelled["cost_usd"]))
    assert by_model["gpt-4.1-mini"][0] == 1


@pytest.mark.parametrize(("rules", "sender"), [
    (("social", 0.0), OWNER),  # a greeting must never reach the big model
    (("urgent", 1.0), GUEST),  # someone else's emergency goes to the owner
])
async def test_nothing_is_speculated_where_the_rules_expect_another_route(
        rules: tuple[str, float], sender: dict[str, Any]) -> None:
    small, big = FakeModel(role="small"), FakeModel(role="big")
    small.enqueue(classified("question"), delay_s=0.2)  # the model disagrees with the rules
    big.enqueue("An answer.")
    state, events = await run(triage(small, big, rules=rules), "hello there", sender)
    assert state["route"] == "full_agent"
    assert events.of("speculation") == []
    [call] = at(events, "model_call", role="big")
    [classify_end] = at(events, "node_end", node="classify_intent")
    assert not call.get("speculative") and call["t"] - call["duration_s"] >= classify_end["t"]


async def test_a_speculative_turn_that_asks_for_a_tool_runs_it_only_once_routed() -> None:
    log: list[tuple[str, dict[str, Any]]] = []
    small, big = FakeModel(role="small"), FakeModel(role="big")
    small.enqueue(classified("social", 0.0, "Hi!"), delay_s=0.2)
    big.enqueue(tool_calls=[("remember", {"text": "milk"})])  # answered at once
    state, events = await run(triage(small, big, rules=("task", 0.3), tools=contract_tools(log)),
                              "hey, milk")
    assert state["route"] == "quick_reply" and state["reply"] == "Hi!"
    assert log == [] and events.of("tool_call") == []  # asked for, never run
    assert len(big.history) == 1
    assert [e["outcome"] for e in events.of("speculation")] == ["started", "unused"]

    small.enqueue(classified("task", 0.3), delay_s=0.2)
    big.enqueue(tool_calls=[("remember", {"text": "milk"})])
    big.enqueue("Saved.")
    state, events = await run(triage(small, big, rules=("task", 0.3), tools=contract_tools(log)),
                              "remember milk")
    assert (state["route"], state["reply"]) == ("full_agent", "Saved.")
    assert log == [("remember", {"text": "milk", "scope": "owner"})]  # once, when routed
    [tool] = events.of("tool_call")
    [route] = events.of("route")
    assert tool["t"] > route["t"] and tool["node"] == "full_agent"
    assert [e["outcome"] for e in events.of("speculation")] == ["started", "adopted"]

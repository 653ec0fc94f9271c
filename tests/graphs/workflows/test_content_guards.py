"""/draft past the daily budget stops with a sentence; a check with no verdict is not checked."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from bot.models import ModelError
from bot.models.base import Message, Observer, ToolSpec
from bot.models.base import Reply as ModelReply
from bot.models.costs import SpendLog
from bot.schema import open_database
from graphs.workflows.content import aggregate, not_checked
from graphs.workflows.verdicts import NO_VERDICT
from tests.fakes.model import FakeModel
from tests.fakes.openai_server import FakeOpenAIServer
from tests.graphs.workflows.test_content import (
    BRIEF,
    GOOD,
    Desk,
    node_order,
    open_desk,
    script_round,
)
from tests.support.models import SleepRecorder, openai_model

BUDGET = 0.10


class RefusingModel(FakeModel):
    """A FakeModel whose calls of ``purposes`` come back refused, as past the daily budget."""

    def __init__(self, role: str, purposes: set[str]) -> None:
        super().__init__(role=role)
        self.refuse = purposes

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None) -> ModelReply:
        reply = await super().complete(messages, tools=tools, max_tokens=max_tokens,
                                       purpose=purpose, observer=observer)
        if purpose in self.refuse:
            reply.refused = "Today's model budget of $0.10 is used up."
            reply.provider = "offline"
        return reply


def assert_stopped_with_nothing_kept(desk: Desk, reply: Any, sentence: str) -> None:
    assert reply.text == sentence and reply.buttons == []
    assert desk.app.flows.store.waits("open", reply.run_id) == []
    assert desk.app.memory.recent("owner", 5) == []
    run = desk.app.flows.store.run(reply.run_id or "")
    assert run is not None and run.status == "completed"
    assert "approval" not in node_order(desk, reply.run_id)
    assert node_order(desk, reply.run_id)[-1] == "stopped"


async def test_draft_past_the_budget_is_refused_clearly_with_no_draft_or_card(
        tmp_path: Path) -> None:
    ledger = SpendLog(open_database(tmp_path / "frontdesk.db"))
    ledger.record(provider="openai", model="gpt-4.1", role="big", purpose="agent",
                  input_tokens=0, output_tokens=0, cost_usd=BUDGET)  # the day's budget is spent
    sleeps = SleepRecorder()
    async with FakeOpenAIServer() as server:
        small, big = (openai_model(server, sleeps, role=role, name=name, ledger=ledger,
                                   budget=BUDGET)
                      for role, name in (("small", "gpt-4.1-mini"), ("big", "gpt-4.1")))
        desk = await open_desk(tmp_path, small, big)  # type: ignore[arg-type]
        reply = await desk.say(BRIEF)
    assert reply.text.startswith("Today's model budget of $0.10 is used up ($0.10 spent or in "
                                 "progress; this call could cost up to $")
    assert reply.text.endswith("), so model answers resume tomorrow. I stopped: no draft was "
                               "made.")
    assert_stopped_with_nothing_kept(desk, reply, reply.text)
    assert server.requests == [] and ledger.spent() == BUDGET and ledger.held() == 0.0


async def test_a_check_refused_after_the_draft_stops_without_a_card(tmp_path: Path) -> None:
    desk = await open_desk(tmp_path, small=RefusingModel("small", {"check_tone"}))
    script_round(desk, "Dear Ann, thank you!", GOOD, GOOD)
    reply = await desk.say(BRIEF)
    assert_stopped_with_nothing_kept(desk, reply, "Today's model budget of $0.10 is used up. "
                                     "I stopped: the draft was not checked and nothing was saved.")


async def test_a_revision_refused_stops_without_an_offline_stand_in(tmp_path: Path) -> None:
    desk = await open_desk(tmp_path, big=RefusingModel("big", {"revise"}))
    script_round(desk, "Dear Ann", GOOD, GOOD)
    await desk.say(BRIEF)
    await desk.say("Revise")
    desk.big.enqueue(text="Dear Ann (offline mode)")  # what the refused revision says
    reply = await desk.say("mention the tulips")
    assert reply.text == ("Today's model budget of $0.10 is used up. I stopped: the draft was "
                          "not revised and nothing was saved.")
    assert reply.buttons == [] and desk.app.memory.recent("owner", 5) == []


async def test_a_tone_check_without_a_verdict_is_listed_as_not_checked(tmp_path: Path) -> None:
    desk = await open_desk(tmp_path)
    script_round(desk, "Dear Ann, thank you!", "Looks lovely to me!", GOOD)
    asked = await desk.say(BRIEF)
    assert "Tone: not checked — the model gave no verdict" in asked.text
    assert "Facts: not checked" not in asked.text


def test_only_checks_with_a_verdict_count_and_none_at_all_is_never_a_pass() -> None:
    fine = {"score": 1.0, "feedback": ""}
    partly = aggregate({"tone": not_checked(NO_VERDICT), "facts": fine, "length": fine})
    assert partly["review"] == {"score": 1.0, "verdict": "partly checked", "problems": [],
                                "not_checked": ["Tone: not checked — the model gave no verdict"]}
    none = aggregate({key: not_checked(NO_VERDICT) for key in ("tone", "facts", "length")})
    assert none["review"]["verdict"] == "not checked" and none["review"]["score"] is None
    assert none["next_step"] == "approval"
    low = aggregate({"tone": not_checked(NO_VERDICT), "facts": {"score": 0.5, "feedback": "x"},
                     "length": fine})
    assert (low["review"]["verdict"], low["next_step"]) == ("fixable", "revise")


async def test_an_offline_or_failed_check_is_not_checked_and_never_a_pass(
        tmp_path: Path) -> None:
    desk = await open_desk(tmp_path, big=FakeModel(role="big", provider="offline"))
    desk.big.enqueue(text="Dear Ann, thank you!")
    desk.big.enqueue(text=json.dumps({"score": 1.0, "feedback": "facts not checked"}))
    desk.small.enqueue(error=ModelError("The OpenAI API had a server error (HTTP 500)."))
    asked = await desk.say(BRIEF)
    assert "Facts: not checked — the model was offline" in asked.text
    assert ("Tone: not checked — the check failed (The OpenAI API had a server error "
            "(HTTP 500).)") in asked.text
    assert [b.label for b in asked.buttons] == ["Approve", "Revise", "Discard"]

"""The content workflow through the gateway and the console adapter, with fake models."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.adapters.console import ConsoleAdapter, console_message
from bot.app import App, assemble
from bot.chat.gateway import Gateway
from bot.config.settings import Settings
from bot.messages import Reply
from bot.models import Models
from graphs.events import EventKind
from tests.fakes.model import FakeModel

GOOD = json.dumps({"score": 0.95, "feedback": ""})
FIXABLE = json.dumps({"score": 0.6, "feedback": "Warmer, please."})
BAD = json.dumps({"score": 0.1, "feedback": "Off-topic and rude."})
BRIEF = "/draft a thank-you note to Ann for the flowers"


@dataclass
class Desk:
    """One Frontdesk on a temporary home: gateway, console adapter and the two fakes."""

    gateway: Gateway
    console: ConsoleAdapter
    small: FakeModel
    big: FakeModel
    home: Path
    app: App  # what assemble built: memory, store...

    async def say(self, text: str, user: str | None = None) -> Reply:
        reply = await self.gateway.handle(console_message(text, user))
        assert reply is not None
        return reply


async def open_desk(home: Path, small: FakeModel | None = None,
                    big: FakeModel | None = None) -> Desk:
    small = small or FakeModel(role="small")
    big = big or FakeModel(role="big")
    settings = Settings.from_env({"FRONTDESK_HOME": str(home)})
    app = assemble(settings, models=Models(small=small, big=big))
    gateway = app.chat.gateway
    await gateway.start()
    console = ConsoleAdapter(echo=False)
    await gateway.attach(console)
    return Desk(gateway, console, small, big, home, app)


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    yield await open_desk(tmp_path)


def script_round(desk: Desk, draft: str | None, tone: str, facts: str,
                 revision: str | None = None) -> None:
    """Queue one pass of the checks, after a draft or a revision."""
    if draft is not None:
        desk.big.enqueue(text=draft)
    if revision is not None:
        desk.big.enqueue(text=revision)
    desk.big.enqueue(text=facts)
    desk.small.enqueue(text=tone)


def node_order(desk: Desk, run_id: str | None) -> list[str]:
    assert run_id is not None
    events = desk.app.flows.store.events(run_id)
    return [e["node"] for e in events if e["event"] == EventKind.NODE_END]


async def test_pass_then_approve_saves_the_note(desk: Desk) -> None:
    script_round(desk, "Dear Ann, thank you for the lovely flowers!", GOOD, GOOD)
    asked = await desk.say(BRIEF)
    assert "Dear Ann, thank you for the lovely flowers!" in asked.text
    assert [b.label for b in asked.buttons] == ["Approve", "Revise", "Discard"]
    assert "problems" not in asked.text
    done = await desk.say("Approve")
    assert done.text.startswith("Approved and saved as note #")
    notes = desk.app.memory.recent("owner", 5)
    assert [n.text for n in notes] == ["Dear Ann, thank you for the lovely flowers!"]
    order = node_order(desk, asked.run_id)
    assert order[0] == "draft" and order[-2:] == ["approval", "save_note"]
    assert set(order[1:4]) == {"check_tone", "check_facts", "check_length"}


async def test_fixable_is_revised_then_passes_and_the_trace_shows_the_cycle(desk: Desk) -> None:
    script_round(desk, "Ann. Flowers. Thanks.", FIXABLE, GOOD)
    script_round(desk, None, GOOD, GOOD, revision="Dear Ann, the flowers made my week!")
    asked = await desk.say(BRIEF)
    assert "the flowers made my week" in asked.text
    revise_call = next(c for c in desk.big.history if c.purpose == "revise")
    assert "Warmer, please." in revise_call.messages[-1].content
    order = node_order(desk, asked.run_id)
    assert order.count("aggregate") == 2 and order.count("revise") == 1
    assert order.index("revise") < len(order) - 1 - order[::-1].index("check_tone")


async def test_fixable_three_times_goes_to_the_owner_after_two_revisions(desk: Desk) -> None:
    script_round(desk, "v0", FIXABLE, GOOD)
    script_round(desk, None, FIXABLE, GOOD, revision="v1")
    script_round(desk, None, FIXABLE, GOOD, revision="v2")
    asked = await desk.say(BRIEF)
    assert [c.purpose for c in desk.big.history].count("revise") == 2
    assert "v2" in asked.text and "Warmer, please." in asked.text
    assert "fixable" in asked.text
    assert desk.big.pending == 0 and desk.small.pending == 0


async def test_unsalvageable_goes_straight_to_the_owner_with_problems(desk: Desk) -> None:
    script_round(desk, "whatever", BAD, GOOD)
    asked = await desk.say(BRIEF)
    assert "unsalvageable" in asked.text and "Off-topic and rude." in asked.text
    assert not [c for c in desk.big.history if c.purpose == "revise"]


async def test_revise_with_feedback_reaches_the_revise_node(desk: Desk) -> None:
    script_round(desk, "Dear Ann, thanks.", GOOD, GOOD)
    await desk.say(BRIEF)
    question = await desk.say("Revise")
    assert question.text == "What should change?"
    script_round(desk, None, GOOD, GOOD, revision="Dear Ann, the tulips were perfect.")
    again = await desk.say("mention that they were tulips")
    assert "the tulips were perfect" in again.text
    revise_call = next(c for c in desk.big.history if c.purpose == "revise")
    assert "mention that they were tulips" in revise_call.messages[-1].content
    assert [b.label for b in again.buttons] == ["Approve", "Revise", "Discard"]


async def test_discard_ends_the_run_and_saves_nothing(desk: Desk) -> None:
    script_round(desk, "Dear Ann", GOOD, GOOD)
    asked = await desk.say(BRIEF)
    done = await desk.say("3")
    assert done.text.startswith("Discarded")
    assert desk.app.memory.recent("owner", 5) == []
    run = desk.app.flows.store.run(asked.run_id or "")
    assert run is not None and run.status == "completed"


async def test_a_restart_while_the_approval_waits_loses_nothing(tmp_path: Path) -> None:
    first = await open_desk(tmp_path)
    script_round(first, "Dear Ann, thank you!", GOOD, GOOD)
    asked = await first.say(BRIEF)
    del first  # the process "dies" here; only the database survives
    second = await open_desk(tmp_path)
    done = await second.say("approve")
    assert done.text.startswith("Approved and saved as note #")
    assert "Dear Ann, thank you!" in done.text
    assert second.big.history == []  # nothing ran again
    assert node_order(second, asked.run_id).count("draft") == 1


async def test_a_button_press_resumes_and_a_second_press_is_refused(desk: Desk) -> None:
    script_round(desk, "Dear Ann", GOOD, GOOD)
    asked = await desk.say(BRIEF)
    approve = asked.buttons[0].token
    first = await desk.gateway.press("console", "owner", approve)
    assert first.accepted and first.edit_text == "Decision: Approve"
    assert any("Approved and saved" in text for _, text in desk.console.sent)
    second = await desk.gateway.press("console", "owner", asked.buttons[2].token)
    assert not second.accepted and "already" in second.alert
    forged = await desk.gateway.press("console", "owner", "not-a-token")
    assert not forged.accepted and "not valid" in forged.alert


async def test_someone_other_than_the_owner_cannot_draft(desk: Desk) -> None:
    reply = await desk.say(BRIEF, user="bob")
    assert reply.route == "command" and "Only the owner" in reply.text
    assert desk.big.history == [] and desk.app.flows.store.runs() == []


async def test_an_unanswered_approval_expires_and_says_so(desk: Desk) -> None:
    script_round(desk, "Dear Ann", GOOD, GOOD)
    asked = await desk.say(BRIEF)
    wait = desk.app.flows.store.waits("open", asked.run_id)[0]
    assert wait.expires_at is not None
    assert await desk.gateway.expire(now=wait.expires_at + 1) == 1
    run = desk.app.flows.store.run(asked.run_id or "")
    assert run is not None and run.route == "expired"
    assert desk.console.sent[-1][1].startswith("The draft expired")
    late = await desk.gateway.press("console", "owner", asked.buttons[0].token)
    assert not late.accepted and "expired" in late.alert


async def test_only_the_owner_can_cancel_a_waiting_draft(desk: Desk) -> None:
    script_round(desk, "Dear Ann", GOOD, GOOD)
    asked = await desk.say(BRIEF)
    refused = await desk.say("/cancel", user="bob")
    assert "Only the owner" in refused.text
    assert desk.app.flows.store.waits("open", asked.run_id)  # still waiting
    done = await desk.say("/cancel")
    assert done.text == "Cancelled the waiting run."
    run = desk.app.flows.store.run(asked.run_id or "")
    assert run is not None and run.status == "cancelled"

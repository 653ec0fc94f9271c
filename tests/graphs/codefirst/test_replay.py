"""Replay: typed outputs after a restart, refusals on change, the re-run choice, ask rounds."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from graphs.codefirst import (
    AgentKit,
    Decision,
    FlowError,
    Workflow,
    agent,
    ask,
    flow_view,
    step,
    workflow,
)
from graphs.runs import Runs, RunStore
from tests.fakes.model import FakeModel

CARD = '{"text": "Dear Ann, thank you!", "words": 4}'


@dataclass
class Card:
    text: str
    words: int


@dataclass
class Tally:
    cards: list[Card]
    total: int


def count(cards: list[Card]) -> Tally:
    return Tally(cards, sum(card.words for card in cards))


def build(model: FakeModel, prompt: str = "Write a short card.",
          seen: list[Any] | None = None) -> Workflow:
    """card (agent, typed) -> tally (step, typed) -> send? (ask, with revisions)."""
    seen = [] if seen is None else seen

    async def revise(card: Card, feedback: str) -> Card:
        revised: Card = await agent("revise", prompt="Revise the card.", returns=Card,
                                    input={"card": card, "feedback": feedback})
        return revised

    @workflow(name="cards", agents=AgentKit(models={"big": model}))
    async def cards(who: str) -> dict[str, Any]:
        card = await agent("card", prompt=prompt, input=who, returns=Card)
        tally = await step(count, [card])
        seen.append((type(card), type(tally), type(tally.cards[0])))
        decision: Decision[Card] = await ask(lambda c: f"Send this?\n{c.text}", key="send",
                                             input=card, returns=Card, revise=revise)
        seen.append(type(decision.value))
        return {"reply": decision.value.text if decision.approved else "Not sent.",
                "choice": decision.choice, "feedback": decision.feedback,
                "total": tally.total}

    return cards


async def started(path: Path, prompt: str = "Write a short card.") -> tuple[str, FakeModel]:
    store = RunStore.open(path)
    model = FakeModel(role="big")
    model.enqueue(text=f"Here it is: {CARD}")
    result = await Runs(store).start(build(model, prompt), {"who": "Ann"}, meta={"chat": "t"})
    assert result.status == "waiting"
    assert result.waits[0]["question"] == "Send this?\nDear Ann, thank you!"
    assert result.waits[0]["options"] == ["Approve", "Revise", "Discard"]
    store.db.close()
    assert result.run_id is not None
    return result.run_id, model


async def test_typed_outputs_come_back_as_their_types_after_a_restart(tmp_path: Path) -> None:
    run_id, _ = await started(tmp_path / "f.db")
    store, model, seen = RunStore.open(tmp_path / "f.db"), FakeModel(role="big"), list[Any]()
    runs = Runs(store)
    runs.register(build(model, seen=seen))  # a "new process": new store, new workflow object
    done = await runs.resume(run_id, "Approve", by="owner")
    assert done.status == "completed" and done["reply"] == "Dear Ann, thank you!"
    assert done["total"] == 4
    assert model.history == []  # the card was not written again
    assert seen == [(Card, Tally, Card), Card]
    run = store.run(run_id)
    assert run is not None and run.workflow == "cards" and run.status == "completed"
    assert [w.status for w in store.waits(None, run_id)] == ["answered"]


async def test_a_changed_prompt_is_refused_then_re_run_when_asked(tmp_path: Path) -> None:
    run_id, _ = await started(tmp_path / "f.db")
    store, model = RunStore.open(tmp_path / "f.db"), FakeModel(role="big")
    runs = Runs(store)
    runs.register(build(model, prompt="Write a long card."))
    refused = await runs.resume(run_id, "Approve", by="owner")
    assert refused.status == "failed" and model.history == []
    assert "step 'card' changed" in refused["error"] and "prompt" in refused["error"]
    assert "input" not in refused["error"].split("(")[1].split(")")[0]
    run = store.run(run_id)
    assert run is not None and run.status == "failed" and "'card'" in (run.error or "")

    model.enqueue(text='{"text": "Dearest Ann, a long thank-you.", "words": 5}')
    again = await runs.rerun(run_id, ["card"])
    assert [c.messages[0].content.split("\n")[0] for c in model.history] == ["Write a long card."]
    # the approval was for the old card: the new one is asked again, not approved silently
    assert again.status == "waiting"
    assert again.waits[0]["question"] == "Send this?\nDearest Ann, a long thank-you."
    done = await runs.resume(run_id, "Approve", by="owner")
    assert done.status == "completed" and done["reply"] == "Dearest Ann, a long thank-you."
    assert done["total"] == 5


async def test_the_re_run_choice_is_kept_for_later_resumes(tmp_path: Path) -> None:
    run_id, _ = await started(tmp_path / "f.db")
    store, model = RunStore.open(tmp_path / "f.db"), FakeModel(role="big")
    runs = Runs(store)
    runs.register(build(model, prompt="Write a long card."))
    model.enqueue(text=CARD)
    again = await runs.rerun(run_id, ["*"])
    assert again.status == "waiting" and len(model.history) == 1
    done = await runs.resume(run_id, "Approve", by="owner")  # replays with the choice kept
    assert done.status == "completed" and len(model.history) == 1


async def test_revise_with_feedback_loops_back_and_asks_again(tmp_path: Path) -> None:
    run_id, _ = await started(tmp_path / "f.db")
    store, model = RunStore.open(tmp_path / "f.db"), FakeModel(role="big")
    runs = Runs(store)
    runs.register(build(model))
    feedback = await runs.resume(run_id, "Revise", by="owner")
    assert feedback.status == "waiting"
    assert feedback.waits[0]["question"] == "What should change?"
    assert feedback.waits[0]["options"] == []
    model.enqueue(text='{"text": "Dear Ann, the tulips were perfect!", "words": 6}')
    asked = await runs.resume(run_id, "mention the tulips", by="owner")
    assert asked.status == "waiting"
    assert asked.waits[0]["question"] == "Send this?\nDear Ann, the tulips were perfect!"
    assert "mention the tulips" in model.history[0].messages[1].content
    done = await runs.resume(run_id, "Approve", by="owner")
    assert done["reply"] == "Dear Ann, the tulips were perfect!"
    assert done["feedback"] == ["mention the tulips"] and done["choice"] == "Approve"
    assert len(model.history) == 1  # the revision was not written twice on the last replay
    keys = [s["key"] for s in flow_view(store.steps(run_id))["steps"]]
    assert keys == ["card", "count", "send#1", "send#1/feedback", "send#1/revise", "send#2"]


async def test_discard_ends_the_run_without_approval(tmp_path: Path) -> None:
    run_id, _ = await started(tmp_path / "f.db")
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    runs.register(build(FakeModel(role="big")))
    done = await runs.resume(run_id, "Discard", by="owner")
    assert done.status == "completed" and done["reply"] == "Not sent."


async def test_the_same_key_with_other_input_is_refused(tmp_path: Path) -> None:
    model = FakeModel(role="big", default_text="ok")

    @workflow(name="twice", agents=AgentKit(models={"big": model}))
    async def twice() -> list[str]:
        return [await agent("say", prompt="Say it.", input=word) for word in ("a", "b")]

    result = await twice.start(RunStore.open(tmp_path / "f.db"))
    assert result.status == "failed" and "key_by" in result["error"]


async def test_outside_a_workflow_a_primitive_says_where_it_works() -> None:
    with pytest.raises(FlowError, match="inside a @workflow"):
        await step(len, "abc")


async def test_an_unanswered_ask_expires_and_the_workflow_sees_it(tmp_path: Path) -> None:
    @workflow(name="expiring")
    async def expiring() -> str:
        decision = await ask("Go?", key="go", expires_after=60)
        return "expired" if decision.expired else decision.choice

    store = RunStore.open(tmp_path / "f.db")
    runs = Runs(store)
    asked = await runs.start(expiring)
    [wait] = store.waits("open")
    assert wait.expires_at is not None and asked.waits[0]["key"] == wait.key
    [done] = await runs.expire_due(now=wait.expires_at + 1)
    assert done.status == "completed" and done["result"] == "expired"


def test_the_public_surface() -> None:
    import graphs.codefirst

    assert set(graphs.codefirst.__all__) >= {
        "AgentKit", "Decision", "FingerprintMismatch", "FlowError", "Workflow", "agent", "ask",
        "approve", "flow_view", "matrix_text", "parallel", "pipeline", "step", "workflow"}
    assert all(hasattr(graphs.codefirst, name) for name in graphs.codefirst.__all__)

"""Meeting: find a free time for a guest, hold it, get the owner's yes, and book it once.

``offer`` records the request and lists up to three free slots; the guest picks one in
``pick`` (buttons, plus *None of these*, which offers the next three: pages go forward in
time); ``hold`` holds the slot for the guest (the rules are checked in code there, and a slot
another guest holds is refused: the guest gets new slots); the owner says Approve or Decline in
``approval`` (a question relayed to the owner's chat); ``book`` checks the slot against the
calendar as it is now and creates one event whose UID comes from the request, so a retry or a
crash replay cannot make a second one. A slot taken meanwhile is a ``conflict``: the guest is
offered new slots under a new request. The owner asking for themself skips ``approval``.

Every service — the store, the rules, the calendar, the owner's notices — is the ``desk``
passed in (``MeetingDesk``), so ``graphs/`` stays free of ``bot/``.

Usage::

    graph = build(MeetingDeps(desk=meetings_desk, offer_expires=24 * 3600))
    state = await runs.start(graph, {"topic": "the budget", "sender": guest}, run_id=run_id)
    # waits on "pick": the slots as buttons (the guest presses one), then on "approval"
    state = await runs.resume(run_id, "Approve", by="owner")
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from graphs.events import RunContext
from graphs.graph import END, START, Graph, GraphState, Node, Suspend
from graphs.nodes import WaitExpired, route_on

NONE_OF_THESE = "None of these"
APPROVE, DECLINE = "Approve", "Decline"
GUEST_NODES = frozenset({"pick"})  # waits the guest who asked answers (not only the owner)
OWNER_NODES = frozenset({"approval"})  # waits relayed to the owner's chat
MAX_ROUNDS = 40  # safety net of the engine: offers, picks and holds in one run
Step = Callable[..., Awaitable[dict[str, Any]]]  # (state[, context])


class MeetingDesk(Protocol):
    """What the workflow asks of the bot: the request's record, slots, rules and calendar."""

    def open(self, meeting_id: str, run_id: str, request: dict[str, Any]) -> str | None:
        """Record the request; a sentence instead when the guest has one open already."""
        ...

    async def calendar_read(self) -> bool:
        """Wait a while for the calendar's first read (at start); False if still unread."""
        ...

    def offer(self, meeting_id: str, request: dict[str, Any],
              after: str | None) -> list[dict[str, str]]:
        """The next free slots after ``after`` (ISO), each ``{"start", "end", "label"}``."""
        ...

    def offer_text(self, request: dict[str, Any], slots: list[dict[str, str]],
                   note: str) -> str:
        """The guest's question with the slots (the owner's zone named)."""
        ...

    def hold(self, meeting_id: str, slot: dict[str, str]) -> str | None:
        """Hold the slot for the request; why not (a sentence), or None when held."""
        ...

    def held_text(self, meeting_id: str) -> str:
        """What the guest is told while the owner decides."""
        ...

    def approval_text(self, meeting_id: str) -> str:
        """The owner's question: who, when, the topic quoted, conflicts nearby."""
        ...

    async def book(self, meeting_id: str) -> dict[str, Any]:
        """Book the held slot once: ``{"outcome": "booked"|"conflict"|"gave_up", "reply"}``,
        booked with ``"file"``: the event's ``.ics`` for the guest (plain JSON)."""
        ...

    def close(self, meeting_id: str, status: str) -> str:
        """End the request as ``status`` (declined, expired); the guest's sentence."""
        ...

    async def closed(self, meeting_id: str, status: str) -> None:
        """After ``close``: whatever the owner is told of it (a reschedule's old time kept)."""
        ...


@dataclass(frozen=True)
class MeetingDeps:
    """Services the meeting workflow uses, passed in by the assembler."""

    desk: MeetingDesk
    offer_expires: float = 24 * 3600.0  # how long a guest has to pick
    hold_expires: float = 24 * 3600.0  # FRONTDESK_MEETING_HOLD: the owner's time to answer


def request_of(state: GraphState) -> dict[str, Any]:
    """The request as the desk reads it: topic, length, window, who asks."""
    return {key: state.get(key) for key in ("topic", "minutes", "earliest", "latest", "sender")}


def offer(deps: MeetingDeps) -> Step:
    """Record the request (first visit) and list the next free slots."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        meeting_id = state.get("meeting_id") or context.run_id or ""
        if not state.get("meeting_id") and (
                refused := deps.desk.open(meeting_id, context.run_id or "", request_of(state))):
            return {"meeting_id": meeting_id, "reply": refused, "next_step": "refused"}
        after = None
        if state.get("choice") == NONE_OF_THESE and state.get("slots"):
            after = state["slots"][-1]["start"]
        await deps.desk.calendar_read()  # at start: the offer waits for the first read
        slots = deps.desk.offer(meeting_id, request_of(state), after)
        note = str(state.get("note") or "")
        return {"meeting_id": meeting_id, "slots": slots, "choice": None, "note": "",
                "question": deps.desk.offer_text(request_of(state), slots, note),
                "next_step": "pick" if slots else "none_free"}

    return node


def pick(deps: MeetingDeps) -> Node:
    """The guest picks a slot by its button (or None of these); expires after a while."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        answer = context.resume_value(None)
        if answer is None:
            options = [slot["label"] for slot in state["slots"]] + [NONE_OF_THESE]
            raise Suspend(question=state["question"], options=options,
                          expires_at=time.time() + deps.offer_expires)
        if answer.get("expired"):
            raise WaitExpired("the guest did not pick a time")
        choice = str(answer.get("answer") or "")
        labels = {slot["label"]: slot for slot in state["slots"]}
        return {"choice": choice, "picked": labels.get(choice),
                "next_step": "hold" if choice in labels else "offer"}

    return Node("pick", node, max_visits=MAX_ROUNDS, on_error="expired")


def hold(deps: MeetingDeps) -> Step:
    """Hold the picked slot (the rules checked in code); taken or against a rule: new slots."""

    async def node(state: GraphState) -> dict[str, Any]:
        why = deps.desk.hold(state["meeting_id"], state["picked"])
        if why is not None:
            return {"note": f"Sorry, {why}. Here are other times.", "next_step": "offer"}
        if state["sender"].get("is_owner"):  # the owner asking for themself approves it
            return {"next_step": "book"}
        return {"told_guest": deps.desk.held_text(state["meeting_id"]),
                "next_step": "approval"}

    return node


def approval(deps: MeetingDeps) -> Node:
    """The owner's Approve / Decline (relayed to the owner's chat); expires with the hold."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        answer = context.resume_value(None)
        if answer is None:
            raise Suspend(question=deps.desk.approval_text(state["meeting_id"]),
                          options=[APPROVE, DECLINE],
                          expires_at=time.time() + deps.hold_expires)
        if answer.get("expired"):
            raise WaitExpired("the owner did not answer within the hold")
        return {"decision": answer.get("answer"), "decision_by": answer.get("by")}

    return Node("approval", node, max_visits=MAX_ROUNDS, on_error="expired")


def book(deps: MeetingDeps) -> Step:
    """Re-check the slot and create the event once; taken meanwhile: a new request."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        outcome = await deps.desk.book(state["meeting_id"])
        if outcome["outcome"] == "conflict":
            rounds = int(state.get("requests") or 1) + 1
            return {"meeting_id": f"{context.run_id or ''}-{rounds}", "requests": rounds,
                    "note": outcome["reply"], "reply": outcome["reply"], "next_step": "offer"}
        return {"reply": outcome["reply"], "reply_file": outcome.get("file"),
                "outcome": outcome["outcome"], "next_step": "done"}

    return node


def renew(deps: MeetingDeps) -> Step:
    """After a conflict: record the new request the guest's new slots belong to."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        deps.desk.open(state["meeting_id"], context.run_id or "", request_of(state))
        return {}

    return node


def ended(deps: MeetingDeps, status: str) -> Step:
    """The request ends without a booking (declined, expired): release the hold, tell the
    guest kindly."""

    async def node(state: GraphState) -> dict[str, Any]:
        reply = deps.desk.close(state["meeting_id"], status)
        await deps.desk.closed(state["meeting_id"], status)
        return {"reply": reply}

    return node


def none_free(deps: MeetingDeps) -> Step:
    """No free time left in the horizon: say so; the request ends."""

    async def node(state: GraphState) -> dict[str, Any]:
        deps.desk.close(state["meeting_id"], "expired")
        return {"reply": state["question"]}

    return node


def build(deps: MeetingDeps) -> Graph:
    """Wire the meeting graph: offer, pick, hold, approval, book (a conflict offers anew)."""
    graph = Graph("meeting")
    graph.add_node(Node("offer", offer(deps), max_visits=MAX_ROUNDS))
    graph.add_node(pick(deps))
    graph.add_node(Node("hold", hold(deps), max_visits=MAX_ROUNDS))
    graph.add_node(approval(deps))
    graph.add_node(Node("book", book(deps), max_visits=MAX_ROUNDS))
    graph.add_node(Node("renew", renew(deps), max_visits=MAX_ROUNDS))
    graph.add_node(Node("declined", ended(deps, "declined")))
    graph.add_node(Node("expired", ended(deps, "expired")))
    graph.add_node(Node("none_free", none_free(deps)))
    graph.add_edge(START, "offer")
    graph.add_router("offer", route_on("next_step"),
                     {"pick": "pick", "none_free": "none_free", "refused": END})
    graph.add_router("pick", route_on("next_step"), {"hold": "hold", "offer": "offer"})
    graph.add_router("hold", route_on("next_step"),
                     {"offer": "offer", "book": "book", "approval": "approval"})
    graph.add_router("approval", route_on("decision"),
                     {APPROVE: "book", DECLINE: "declined"})
    graph.add_router("book", route_on("next_step"), {"offer": "renew", "done": END})
    graph.add_edge("renew", "offer")
    for last in ("declined", "expired", "none_free"):
        graph.add_edge(last, END)
    return graph

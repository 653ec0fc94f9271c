"""Content: draft a piece from the owner's brief, check it three ways at once, revise in a
bounded loop, and let the owner decide.

``draft`` writes; ``check_tone`` (small model), ``check_facts`` (agent with the memory search
tool only) and ``check_length`` (pure function) run in parallel; ``aggregate`` takes the lowest
score of the checks that gave a verdict and routes: *pass* → ``approval``; *fixable* with fewer
than two automatic revisions → ``revise`` → the checks again; otherwise → ``approval`` showing
the problems. A check with no verdict (none in the reply, offline, failed) is *not checked*: it
does not count, the card lists it, and the draft is not called a pass. The owner picks Approve
(→ ``save_note``), Revise (→ ``feedback`` → ``revise``) or Discard. A refused model call (the
daily budget) is never content: the workflow says so and stops (→ ``stopped``), nothing kept.

Usage::

    graph = build(ContentDeps(small=..., big=..., loop=run_loop, ...))
    state = await run_graph(graph, {"brief": "a thank-you note to Ann", "sender": owner},
                            store=store, run_id=run_id)
    # state.status == "waiting": show state.waits[0]["question"] with its options, then
    state = await resume(store, run_id, "Approve", by="owner")

The workflow counts its own revisions; ``max_visits`` is only the engine's safety net.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from graphs.events import RunContext
from graphs.graph import END, START, Graph, GraphState, Node
from graphs.nodes import human_node, route_on
from graphs.protocols import AgentLoop, ChatModel, parse_json_object
from graphs.workflows.verdicts import NO_VERDICT, OFFLINE, Refused, StopOnRefusal, offline

PASS_AT = 0.8  # every check at least this: ready for the owner
FIXABLE_AT = 0.4  # below this, editing cannot save the draft
AUTO_REVISIONS = 2
CHECKS = ("check_tone", "check_facts", "check_length")
REVIEWS = {"tone": "Tone", "facts": "Facts", "length": "Length"}  # state key -> card label
OPTIONS = ["Approve", "Revise", "Discard"]
WORD_LIMIT = re.compile(r"\b(?:in|under|within|max(?:imum)?|at most|up to|no more than)\s+"
                        r"(\d{1,5})\s+words?\b", re.IGNORECASE)
Step = Callable[[GraphState, RunContext], Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class ContentDeps:
    """Services the content workflow uses, passed in by the gateway."""

    small: ChatModel
    big: ChatModel
    loop: AgentLoop
    writing_tools: Any  # the draft agent's tools
    facts_tools: Any  # the fact checker's tools: memory search only
    make_caller: Callable[[dict[str, Any]], Any]
    save_note: Callable[[str, str], int]  # (scope, text) -> note id
    prompts: dict[str, str]  # draft, revise, check_tone, check_facts
    max_words: int = 300
    expires_after: float = 7 * 24 * 3600.0


def word_limit(brief: str, default: int) -> int:
    """A limit the brief names ("in 100 words"), else the configured one."""
    found = WORD_LIMIT.search(brief)
    return max(1, int(found.group(1))) if found else default


def parse_review(text: str) -> dict[str, Any] | None:
    """Read ``{"score": ..., "feedback": ...}`` from a reply; None if there is none."""
    data = parse_json_object(text)
    if data is None or not isinstance(data.get("score"), int | float):
        return None
    score = min(1.0, max(0.0, float(data["score"])))
    return {"score": score, "feedback": str(data.get("feedback") or "")}


def not_checked(why: str) -> dict[str, Any]:
    """A check that gave no verdict: no score, and why."""
    return {"score": None, "feedback": "", "why": why}


def review_of(result: Any) -> dict[str, Any]:
    """A model reply (or loop result) as a review; no verdict in it is *not checked*."""
    if error := getattr(result, "error", None):
        return not_checked(f"the check failed ({error})")
    if offline(result):
        return not_checked(OFFLINE)
    return parse_review(str(result.text)) or not_checked(NO_VERDICT)


def draft(deps: ContentDeps) -> Step:
    """The big model, with writing tools, turns the brief into a first draft."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        messages = [{"role": "system", "content": deps.prompts["draft"]},
                    {"role": "user", "content": state["brief"]}]
        counters = {"auto_revisions": 0, "owner_revisions": 0}
        try:
            result = await deps.loop(context.model(deps.big), messages, deps.writing_tools,
                                     deps.make_caller(state["sender"]), purpose="draft",
                                     observer=context.observer(), context=context)
        except Refused as refused:
            return {"draft": "", "stopped": f"{refused.reason} I stopped: no draft was made.",
                    **counters}
        if error := getattr(result, "error", None):  # a failure's sentence is not a draft
            return {"draft": "", "stopped": f"{error} I stopped: no draft was made.",
                    **counters}
        return {"draft": result.text.strip(), **counters}

    return node


def a_check(key: str, ask: Callable[[GraphState, RunContext], Awaitable[Any]]) -> Step:
    """A check node writing its review to ``key``: after a stop it is not checked; a refused
    call stops the workflow (``aggregate`` reads ``refused``); a failed call did not run,
    so it is not checked, never a pass; otherwise the reply's verdict (``review_of``)."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        if state.get("stopped"):
            return {key: not_checked("stopped")}
        try:
            result = await ask(state, context)
        except Refused as refused:
            return {key: {**not_checked("refused"), "refused": refused.reason}}
        except Exception as exc:  # a failed check did not run; it is not a pass either
            why = getattr(exc, "user_message", None) or type(exc).__name__
            return {key: not_checked(f"the check failed ({why})")}
        return {key: review_of(result)}

    return node


def check_tone(deps: ContentDeps) -> Step:
    """The small model scores the tone; a reply without a verdict is not checked."""

    async def ask(state: GraphState, context: RunContext) -> Any:
        messages = [{"role": "system", "content": deps.prompts["check_tone"]},
                    {"role": "user", "content": f"Brief: {state['brief']}\n\n{state['draft']}"}]
        return await deps.small.complete(messages, max_tokens=200, purpose="check_tone",
                                         observer=context.observer())

    return a_check("tone", ask)


def check_facts(deps: ContentDeps) -> Step:
    """An agent with only the memory search tool checks claims against the notes."""

    async def ask(state: GraphState, context: RunContext) -> Any:
        messages = [{"role": "system", "content": deps.prompts["check_facts"]},
                    {"role": "user", "content": state["draft"]}]
        return await deps.loop(context.model(deps.big), messages, deps.facts_tools,
                               deps.make_caller(state["sender"]), purpose="check_facts",
                               observer=context.observer(), context=context)

    return a_check("facts", ask)


def check_length(deps: ContentDeps) -> Callable[[GraphState], dict[str, Any]]:
    """Words against the limit from the brief or the config (a pure function)."""

    def node(state: GraphState) -> dict[str, Any]:
        if state.get("stopped"):
            return {"length": not_checked("stopped")}
        limit, words = word_limit(state["brief"], deps.max_words), len(state["draft"].split())
        if words == 0:
            return {"length": {"score": 0.0, "feedback": "The draft is empty."}}
        if words <= limit:
            return {"length": {"score": 1.0, "feedback": ""}}
        return {"length": {"score": 0.6, "feedback": f"Cut it to {limit} words (now {words})."}}

    return node


def aggregate(state: GraphState) -> dict[str, Any]:
    """The lowest score of the checks that ran decides; the rest are listed as not checked."""
    reviews = {key: state[key] for key in REVIEWS}
    refused = next((r["refused"] for r in reviews.values() if r.get("refused")), None)
    if state.get("stopped"):
        return {"next_step": "stopped"}
    if refused:
        return {"stopped": f"{refused} I stopped: the draft was not checked and nothing was "
                           "saved.", "next_step": "stopped"}
    scored = [r for r in reviews.values() if r["score"] is not None]
    unchecked = [f"{REVIEWS[key]}: not checked — {r['why']}" for key, r in reviews.items()
                 if r["score"] is None]
    score = min((r["score"] for r in scored), default=None)
    problems = [r["feedback"] for r in scored if r["feedback"]]
    if score is None:
        verdict, next_step = "not checked", "approval"
    elif score >= PASS_AT:
        verdict, next_step = ("partly checked" if unchecked else "pass"), "approval"
    elif score >= FIXABLE_AT:
        verdict = "fixable"
        next_step = "revise" if state.get("auto_revisions", 0) < AUTO_REVISIONS else "approval"
    else:
        verdict, next_step = "unsalvageable", "approval"
    return {"review": {"score": score, "verdict": verdict, "problems": problems,
                       "not_checked": unchecked}, "next_step": next_step}


def revise(deps: ContentDeps) -> Step:
    """The big model rewrites with the feedback: the owner's if they gave some, else the checks'."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        owner_feedback = state.get("owner_feedback")
        feedback = owner_feedback or "\n".join(state["review"]["problems"])
        messages = [{"role": "system", "content": deps.prompts["revise"]},
                    {"role": "user", "content": f"Brief: {state['brief']}\n\nDraft:\n"
                     f"{state['draft']}\n\nFeedback:\n{feedback}"}]
        try:
            reply = await context.model(deps.big).complete(messages, max_tokens=1500,
                                                           purpose="revise",
                                                           observer=context.observer())
        except Refused as refused:
            return {"stopped": f"{refused.reason} I stopped: the draft was not revised and "
                               "nothing was saved."}
        if owner_feedback:
            return {"draft": reply.text.strip(), "owner_feedback": None,
                    "owner_revisions": state.get("owner_revisions", 0) + 1}
        return {"draft": reply.text.strip(),
                "auto_revisions": state.get("auto_revisions", 0) + 1}

    return node


def approval_question(state: GraphState) -> str:
    """The draft as the owner sees it, with any problems the checks left and what went
    unchecked."""
    review = state["review"]
    lines = [f"Draft for: {state['brief']}", "", state["draft"], ""]
    if review["verdict"] in ("fixable", "unsalvageable"):
        lines += [f"The checks still see problems ({review['verdict']}, score "
                  f"{review['score']:.2f}):", *[f"- {p}" for p in review["problems"]], ""]
    if review.get("not_checked"):
        lines += [*review["not_checked"], ""]
    lines.append("Approve, Revise or Discard?")
    return "\n".join(lines)


def save_note(deps: ContentDeps) -> Callable[[GraphState], dict[str, Any]]:
    """Approved: keep the final text as a note and send it."""

    def node(state: GraphState) -> dict[str, Any]:
        note_id = deps.save_note(state["sender"]["scope"], state["draft"])
        return {"note_id": note_id,
                "reply": f"Approved and saved as note #{note_id}:\n\n{state['draft']}"}

    return node


def stopped(state: GraphState) -> dict[str, Any]:
    """A model call was refused (or failed): say so; nothing is kept."""
    return {"reply": state["stopped"]}


def discarded(state: GraphState) -> dict[str, Any]:
    """Discarded: nothing is kept."""
    return {"reply": "Discarded the draft; nothing was saved."}


def expired(state: GraphState) -> dict[str, Any]:
    """Nobody decided in time: the draft is dropped, and the owner is told."""
    return {"reply": "The draft expired without a decision; nothing was saved."}


def build(deps: ContentDeps) -> Graph:
    """Wire the content graph: draft, three parallel checks, a bounded cycle, the owner's gate."""
    # a refused call raises Refused in the node that made it, through the tool loop too
    deps = replace(deps, small=StopOnRefusal(deps.small), big=StopOnRefusal(deps.big))
    graph = Graph("content")
    loops = AUTO_REVISIONS + 6  # safety net only: the workflow routes on its own counters
    graph.add_node(Node("draft", draft(deps)))
    graph.add_node(Node("check_tone", check_tone(deps), max_visits=loops))
    graph.add_node(Node("check_facts", check_facts(deps), max_visits=loops))
    graph.add_node(Node("check_length", check_length(deps), max_visits=loops))
    graph.add_node(Node("aggregate", aggregate, max_visits=loops))
    graph.add_node(Node("revise", revise(deps), max_visits=loops))
    graph.add_node(human_node(approval_question, "decision", OPTIONS,
                              expires_after=deps.expires_after, on_expiry="expired",
                              name="approval", max_visits=loops))
    graph.add_node(human_node("What should change?", "owner_feedback",
                              expires_after=deps.expires_after, on_expiry="expired",
                              name="feedback", max_visits=loops))
    graph.add_node(Node("save_note", save_note(deps)))
    graph.add_node(Node("discarded", discarded))
    graph.add_node(Node("stopped", stopped))
    graph.add_node(Node("expired", expired))
    graph.add_edge(START, "draft")
    for check in CHECKS:
        graph.add_edge("draft", check)
        graph.add_edge("revise", check)
        graph.add_edge(check, "aggregate")
    graph.add_router("aggregate", route_on("next_step"),
                     {"revise": "revise", "approval": "approval", "stopped": "stopped"})
    graph.add_router("approval", route_on("decision"),
                     {"Approve": "save_note", "Revise": "feedback", "Discard": "discarded"})
    graph.add_edge("feedback", "revise")
    for last in ("save_note", "discarded", "expired", "stopped"):
        graph.add_edge(last, END)
    return graph

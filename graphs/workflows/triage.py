"""Triage: decide, fast and in parallel, what one incoming message needs.

``classify_intent`` (small model) and ``check_calendar`` run at the same time; ``gather``
waits for both and picks the route; then exactly one of ``quick_reply`` (small model),
``full_agent`` (the tool loop on the big model, pre-loaded with memory hits and the calendar)
or ``notify_now`` (tell the owner, tell the sender) writes the ``reply``.

No latency tax on a question or a task: once the calendar is read, ``check_calendar`` starts
the agent's first big-model turn speculatively, and ``classify_intent`` asks the small model
once that turn's request has left (``graphs.workflows.speculation``); ``full_agent`` adopts
that turn, and ``gather`` cancels it on any other route. A message the offline rules route
elsewhere (a greeting, an urgent one from someone else) is never speculated on: a greeting
never reaches the big model.

One small call answers a greeting: the classify call asks for ``{"intent", "urgency",
"reply"}``, and when the intent is social its ``reply`` is kept as ``social_reply``;
``quick_reply`` then answers with it and calls no model (it writes ``reply_from``). A model
that leaves ``reply`` empty or out costs the second small call, as does the offline rules'
fallback when the classify reply is not JSON.

Usage::

    graph = build(TriageDeps(small=..., big=..., loop=run_loop, tools=registry, ...))
    state = await run_graph(graph, {"text": "hi!", "sender": sender, "history": []})
    print(state["route"], state["reply"])

``sender`` is a plain dict: ``scope``, ``is_owner``, ``platform``, ``chat_id``, ``name``.
A message that came with files also has ``caption`` (what the sender typed, or a voice note's
transcript: what triage classifies on; none means a ``question`` for ``full_agent``) and
``images`` (``{"media_type", "path"}`` each, shown to the big model).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from graphs.events import RunContext
from graphs.graph import END, START, Graph, GraphState, Node, Observer
from graphs.nodes import route_on
from graphs.protocols import AgentLoop, ChatModel, parse_json_object
from graphs.workflows.speculation import Speculations
from graphs.workflows.verdicts import offline, refusal

AsyncNode = Callable[[GraphState, RunContext], Awaitable[dict[str, Any]]]
ROUTES = ("quick_reply", "full_agent", "notify_now")
INTENTS = ("social", "question", "task", "urgent")
URGENT_AT = 0.8
# The intent, the urgency and, for a social message, its one- or two-sentence answer.
CLASSIFY_MAX_TOKENS = 200
QUICK_REPLY_MAX_TOKENS = 120


@dataclass(frozen=True)
class TriageDeps:
    """The services triage uses, passed in by the gateway (``graphs/`` never imports ``bot/``)."""

    small: ChatModel
    big: ChatModel
    loop: AgentLoop
    tools: Any  # the tool registry the loop offers the model
    make_caller: Callable[[dict[str, Any]], Any]  # sender dict -> the loop's caller
    search_notes: Callable[[str, str, int], list[str]]  # (scope, query, k) -> note texts
    read_calendar: Callable[[dict[str, Any]], str]  # sender -> calendar context ("" if none)
    notify_owner: Callable[[dict[str, Any], str], Awaitable[str]]  # -> text for the sender
    fallback_classify: Callable[[str], tuple[str, float]]  # the offline rules
    prompts: dict[str, str]  # classify, quick_reply, agent
    speculate: bool = True  # start full_agent's first turn while classify runs
    has_calendar: bool = True  # False: no calendar to read, so no worker thread to read it in


def read_classification(reply: str) -> tuple[str, float, str] | None:
    """Read ``{"intent", "urgency", "reply"}`` from a model's reply text; None if it can't.

    The third part is the social answer: ``""`` unless the intent is social and the model
    wrote a non-empty ``reply`` string (a local model may well leave the field out)."""
    data = parse_json_object(reply)
    if data is None or data.get("intent") not in INTENTS:
        return None
    try:
        urgency = min(1.0, max(0.0, float(data.get("urgency", 0.0))))
    except (TypeError, ValueError):
        urgency = 0.0
    intent = str(data["intent"])
    answer = data.get("reply")
    social_reply = answer.strip() if intent == "social" and isinstance(answer, str) else ""
    return intent, urgency, social_reply


def parse_classification(reply: str) -> tuple[str, float] | None:
    """Read ``{"intent": ..., "urgency": ...}`` from a model's reply text; None if it can't."""
    read = read_classification(reply)
    return None if read is None else (read[0], read[1])


def stood_in(model: ChatModel, reply: Any) -> bool:
    """The offline assistant answered for a model that is not the offline one (a refused call,
    a provider that is down): its text then lacks the sentence saying why, which the second
    small call's fallback reply does carry, so its social answer is not kept."""
    if refusal(reply) is not None:
        return True
    return offline(reply) and getattr(model, "provider", "offline") != "offline"


def choose_route(intent: str, urgency: float, sender_is_owner: bool) -> str:
    """Urgent goes to the owner (unless it is the owner writing); social gets a quick reply."""
    if intent == "urgent" or urgency >= URGENT_AT:
        return "full_agent" if sender_is_owner else "notify_now"
    if intent == "social":
        return "quick_reply"
    return "full_agent"


def request_of(state: GraphState) -> str:
    """What the sender asked in words: the caption of a file, else the message text."""
    return str(state.get("caption", state["text"]))


def user_turn(state: GraphState) -> dict[str, Any]:
    """The message as the big model's user turn, with its images when it has any."""
    turn: dict[str, Any] = {"role": "user", "content": state["text"]}
    if state.get("images"):
        turn["images"] = list(state["images"])
    return turn


async def classify(small: ChatModel, prompt: str, fallback: Callable[[str], tuple[str, float]],
                   text: str, observer: Observer | None = None) -> dict[str, Any]:
    """The classify step on one request: the small model's ``{"intent", "urgency", "reply"}``,
    else the offline rules (``fallback``); ``classified_by`` says which decided. A social
    message's answer is kept as ``social_reply`` only when there is one, so ``quick_reply``
    knows whether it still has to ask."""
    if not text.strip():  # a file without a caption: the big model looks at it
        return {"intent": "question", "urgency": 0.0, "classified_by": "no caption"}
    messages = [{"role": "system", "content": prompt}, {"role": "user", "content": text}]
    try:
        reply = await small.complete(messages, max_tokens=CLASSIFY_MAX_TOKENS,
                                     purpose="classify", observer=observer)
        parsed = read_classification(reply.text)
    except Exception:  # classification only advises: the rules still route the message
        parsed = None
    if parsed is None:
        intent, urgency = fallback(text)
        return {"intent": intent, "urgency": urgency, "classified_by": "rules"}
    intent, urgency = parsed[0], parsed[1]
    social_reply = parsed[2]
    update: dict[str, Any] = {"intent": intent, "urgency": urgency, "classified_by": "model"}
    if social_reply and not stood_in(small, reply):
        update["social_reply"] = social_reply
    return update


async def classify_and_route(small: ChatModel, prompt: str,
                             fallback: Callable[[str], tuple[str, float]], text: str,
                             sender_is_owner: bool,
                             observer: Observer | None = None) -> dict[str, Any]:
    """What triage decides for one message and nothing after it (``frontdesk eval``): the
    classify step, then the route ``gather`` would take."""
    update = await classify(small, prompt, fallback, text, observer)
    return {**update, "route": choose_route(update["intent"], update["urgency"],
                                            sender_is_owner)}


def classify_intent(deps: TriageDeps, speculations: Speculations) -> AsyncNode:
    """Ask the small model for the intent as JSON; fall back to the offline rules (``classify``).

    When the agent's first turn is started early, its request leaves first
    (``Speculations.let_go_first``): nothing competes with it for the event loop until it is
    on its way."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        text = request_of(state)
        run_id = context.run_id
        if text.strip() and run_id is not None:  # the agent's speculative turn leaves first
            await speculations.let_go_first(run_id)
        return await classify(deps.small, deps.prompts["classify"], deps.fallback_classify,
                              text, context.observer())

    return node


def check_calendar(deps: TriageDeps, speculations: Speculations) -> AsyncNode:
    """Read today's events and the next hours (in a worker thread); then, when the offline
    rules expect ``full_agent``, start its first turn while ``classify_intent`` still runs."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        run_id = context.run_id
        early = run_id if run_id is not None and speculating(deps, state) else None
        if early is not None:
            speculations.expect(early)  # before any wait: classify (next to run) sees it
        started = False
        try:
            calendar = (await asyncio.to_thread(deps.read_calendar, state["sender"])
                        if deps.has_calendar else "")
            if early is not None:
                speculations.start(early, deps.loop, context.model(deps.big),
                                   agent_messages(deps, state, calendar), deps.tools,
                                   deps.make_caller(state["sender"]), context)
                started = True
        finally:
            if early is not None and not started:
                speculations.sent(early)  # no turn after all: classify need not wait
        if early is not None and started:  # its request leaves before this node is recorded
            await speculations.let_go_first(early)
        return {"calendar": calendar}

    return node


def speculating(deps: TriageDeps, state: GraphState) -> bool:
    """Whether to start the agent's first turn early: when the offline rules' guess at the
    route is ``full_agent``; never for what they take for social (a greeting must not reach the
    big model) or for someone else's urgent message."""
    if not deps.speculate:
        return False
    text = request_of(state)
    if not text.strip():  # no caption: classify decides at once, there is nothing to overlap
        return False
    intent, urgency = deps.fallback_classify(text)
    return choose_route(intent, urgency, bool(state["sender"]["is_owner"])) == "full_agent"


def gather(speculations: Speculations) -> AsyncNode:
    """Both branches are in: pick the route from the intent, the urgency and who wrote; on any
    route but ``full_agent``, cancel its speculative first turn (its cost is counted first)."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        route = choose_route(state["intent"], state["urgency"],
                             bool(state["sender"]["is_owner"]))
        speculations.routed(context.run_id)
        if route != "full_agent":
            await speculations.cancel(context.run_id, f"route {route}")
        return {"route": route}

    return node


def quick_reply(deps: TriageDeps) -> AsyncNode:
    """A short social answer from the small model: the big model is never spent on it.

    When the classify call already wrote the answer, it is the reply and no model is called
    (``reply_from`` says so in the trace); otherwise the small model is asked now."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        if state.get("social_reply"):
            return {"reply": state["social_reply"], "reply_from": "classify_intent"}
        messages = [{"role": "system", "content": deps.prompts["quick_reply"]},
                    {"role": "user", "content": request_of(state)}]
        try:
            reply = await deps.small.complete(messages, max_tokens=QUICK_REPLY_MAX_TOKENS,
                                              purpose="quick_reply",
                                              observer=context.observer(),
                                              on_text=context.live_text())
        except Exception as exc:  # the model's one-sentence reason is the answer
            return {"reply": getattr(exc, "user_message", "The model is unavailable right now.")}
        return {"reply": reply.text}

    return node


def agent_messages(deps: TriageDeps, state: GraphState, calendar: str) -> list[dict[str, Any]]:
    """The agent's conversation: the prompt with memory hits and the calendar, the history,
    the message (the same whether built for the speculative turn or for ``full_agent``)."""
    sender = state["sender"]
    context = [deps.prompts["agent"]]
    query = request_of(state)
    hits = deps.search_notes(sender["scope"], query, 5) if query.strip() else []
    if hits:
        context.append("Notes that may help:\n" + "\n".join(f"- {hit}" for hit in hits))
    if calendar:
        context.append("Calendar, today and the next hours:\n" + calendar)
    if not sender["is_owner"]:
        context.append(f"You are talking with {sender.get('name') or 'a guest'}, "
                       "not the owner.")
    return [{"role": "system", "content": "\n\n".join(context)},
            *state.get("history", []), user_turn(state)]


def full_agent(deps: TriageDeps, speculations: Speculations) -> AsyncNode:
    """The tool loop on the big model, pre-loaded with memory hits and the calendar; its first
    turn is the speculative one when that asked exactly the same."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        messages = agent_messages(deps, state, state.get("calendar") or "")
        model = speculations.adopting(context.run_id, context.model(deps.big))
        result = await deps.loop(model, messages, deps.tools, deps.make_caller(state["sender"]),
                                 observer=context.observer(), context=context,
                                 on_text=context.live_text())  # shown as it is written
        return {"reply": result.text}

    return node


def notify_now(deps: TriageDeps) -> Callable[[GraphState], Awaitable[dict[str, Any]]]:
    """Tell the owner now who wrote what; tell the sender it was passed on."""

    async def node(state: GraphState) -> dict[str, Any]:
        confirmation = await deps.notify_owner(state["sender"], state["text"])
        return {"reply": confirmation, "notified": True}

    return node


def build(deps: TriageDeps) -> Graph:
    """Wire the triage graph: two parallel fetches, a join, a router, three endings."""
    graph = Graph("triage")
    speculations = Speculations()  # full_agent's first turns started early, by run
    graph.add_node(Node("classify_intent", classify_intent(deps, speculations)))
    graph.add_node(Node("check_calendar", check_calendar(deps, speculations)))
    graph.add_node(Node("gather", gather(speculations)))
    graph.add_node(Node("quick_reply", quick_reply(deps)))
    graph.add_node(Node("full_agent", full_agent(deps, speculations)))
    graph.add_node(Node("notify_now", notify_now(deps)))
    graph.add_edge(START, "check_calendar")  # first: it starts the agent's first turn
    graph.add_edge(START, "classify_intent")
    graph.add_edge("classify_intent", "gather")
    graph.add_edge("check_calendar", "gather")
    graph.add_router("gather", route_on("route"), {route: route for route in ROUTES})
    for route in ROUTES:
        graph.add_edge(route, END)
    return graph

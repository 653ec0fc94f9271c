"""One run's events, the same for graph runs and code workflows: to the observer, to the store.

An event is ``{"event": kind, ..., "run_id", "t"}``, its kind one of ``EventKind`` (the one
list: kinds are stored and shown, so their values are a contract). The observer sees an event
at once; the store gets the events not yet written at the next ``record``, which a boundary
passes its delta and frontier to (one append per boundary: that is the durable step). Both
runtimes go through the same calls: ``begin`` a run, ``record`` a boundary, ``park`` on a
wait, ``end`` the run; ``new_run_id`` names a run and ``describe`` an error, for both.

``RunContext`` is what a node is handed (its second parameter, as pydantic-graph hands a
``GraphRunContext``): the run's id and meta, the node and its visit, the answer it was woken
with, its observer, the sink its answer streams to, and the chat's choice of a model.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Iterable, Mapping
from enum import StrEnum
from typing import Any, TypeVar

from graphs.graph import GraphState, Observer, RunLog, RunResult
from graphs.live import TextSink, WatchedSink
from graphs.protocols import chat_of, chosen_model

log = logging.getLogger(__name__)
NO_ANSWER: Any = object()  # a node visited without an answer to read
M = TypeVar("M")


class EventKind(StrEnum):
    """Every kind of event a run records or an observer sees (the values are stored)."""

    GRAPH_START = "graph_start"  # a run starts, or continues (``resumed``)
    GRAPH_END = "graph_end"  # a run stops moving: completed, failed, cancelled or waiting
    NODE_START = "node_start"  # a node (or a code workflow's call) starts an attempt
    NODE_END = "node_end"  # ... and ends it (``error``; ``retry_in`` when it is tried again)
    ROUTE = "route"  # a router (or on_error) picked a target
    WAIT = "wait"  # a node parks on a question
    STEP_RERUN = "step_rerun"  # a changed code step runs again by choice
    RERUN = "rerun"  # the owner chose steps to run again
    RECOVERED = "recovered"  # a run left running by a dead process is taken up
    MODEL_CALL = "model_call"  # a model was called (tokens, cost)
    TOOL_CALL = "tool_call"  # the agent loop called a tool
    LOOP_END = "loop_end"  # the agent loop stopped
    FIRST_TOKEN = "first_token"  # a streamed answer's first text came from the model
    FIRST_VISIBLE = "first_visible"  # ... and was first shown in the chat (draft or edit)
    SPECULATION = "speculation"  # work started before its node: started, adopted, cancelled


def describe(exc: BaseException) -> str:
    """An error as runs record it: ``Type: message`` (the type alone without a message)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def new_run_id() -> str:
    """A new run's id (16 hex digits)."""
    return uuid.uuid4().hex[:16]


class RunEvents:
    """The events of run ``run_id``: handed to ``observer``, appended to ``store``."""

    def __init__(self, run_id: str, observer: Observer | None, store: RunLog | None) -> None:
        self.run_id = run_id
        self.observer = observer
        self.store = store
        self.on = observer is not None or store is not None  # else no event is even built
        self.pending: list[dict[str, Any]] = []

    def emit(self, kind: str, **fields: Any) -> None:
        event = {"event": kind, **fields, "run_id": self.run_id, "t": time.time()}
        if self.observer is not None:
            try:
                self.observer(event)
            except Exception:  # a broken trace must not break the run
                log.exception("run observer failed on %s", kind)
        if self.store is not None:
            self.pending.append(event)

    def record(self, delta: GraphState | None = None, frontier: dict[str, Any] | None = None,
               taken: str | None = None) -> None:
        """Store the pending events; the last carries ``delta`` and ``frontier`` if given."""
        if self.store is not None and self.pending:
            events, self.pending = self.pending, []
            self.store.append(self.run_id, events, delta, frontier, taken)

    @staticmethod
    def frontier(ready: Iterable[str], waiting: Mapping[str, dict[str, Any]],
                 visits: Mapping[str, int]) -> dict[str, Any]:
        """What is left to run, as a boundary stores it: ready nodes, waits by node, visits."""
        return {"ready": list(ready), "waiting": {n: w["key"] for n, w in waiting.items()},
                "visits": dict(visits)}

    def retrying(self, node: str, took: float, exc: BaseException, attempt: int,
                 delay: float) -> None:
        """Attempt ``attempt`` of ``node`` failed and is tried again after ``delay``."""
        self.emit(EventKind.NODE_END, node=node, duration_s=took, wrote=[], error=describe(exc),
                  attempt=attempt, retry_in=delay)
        self.record()

    def begin(self, workflow: str, state: RunResult | None, max_steps: int,
              **fields: Any) -> None:
        """A run starts (``state``: its input, which creates its row) or continues (None)."""
        if state is not None and self.store is not None:
            self.store.begin(self.run_id, workflow, state, max_steps)
        if state is None:
            fields["resumed"] = True
        if self.on:
            self.emit(EventKind.GRAPH_START, workflow=workflow, **fields)

    def park(self, wait: dict[str, Any], frontier: dict[str, Any],
             taken: str | None = None) -> None:
        """Record a wait (``run_waits`` gets its row) with the frontier that waits on it."""
        self.emit(EventKind.WAIT, **wait)
        self.record(delta={}, frontier=frontier, taken=taken)

    def end(self, status: str, delta: GraphState | None = None,
            frontier: dict[str, Any] | None = None, **fields: Any) -> None:
        """The run stops moving with ``status``: recorded with its last writes and frontier."""
        self.emit(EventKind.GRAPH_END, status=status, **fields)
        self.record(delta, frontier)

    def forward(self, node: str, *, record: bool = False, **tags: Any) -> Observer:
        """An observer for a model or loop inside ``node``: its events join the run's, tagged
        with the node and ``tags`` (``record``: stored at once rather than at the node's
        boundary)."""
        def forward(event: dict[str, Any]) -> None:
            fields = {k: v for k, v in event.items() if k not in ("event", "run_id", "t")}
            self.emit(str(event.get("event", "")), **{**fields, **tags, "node": node})
            if record:
                self.record()
        return forward


class RunContext:
    """What a node of a run is handed: who it is, what woke it, where its events and its
    answer go. Built by the engine only for a node whose function takes it."""

    __slots__ = ("answer", "events", "live", "meta", "node", "visit")

    def __init__(self, events: RunEvents, node: str, visit: int, answer: Any = NO_ANSWER,
                 meta: Mapping[str, Any] | None = None, live: TextSink | None = None) -> None:
        self.events, self.node = events, node
        self.visit, self.answer = visit, answer
        self.meta: Mapping[str, Any] = meta or {}
        self.live = live  # where the run's answer streams (None: nobody watches)

    @classmethod
    def outside(cls, node: str = "node") -> RunContext:
        """A context for calling a node by hand, outside any run: nobody watches, nothing
        is stored, nothing streams."""
        return cls(RunEvents("", None, None), node, 1)

    @property
    def run_id(self) -> str | None:
        """The run's id (None for a run neither observed nor stored)."""
        return self.events.run_id or None

    @property
    def chat(self) -> tuple[str, str] | None:
        """The chat the run answers (``platform``, ``chat_id`` of its meta), if any."""
        return chat_of(self.meta)

    def resume_value(self, default: Any = None) -> Any:
        """The answer the node was woken with, else ``default``."""
        return default if self.answer is NO_ANSWER else self.answer

    def observer(self) -> Observer | None:
        """An observer tagging events with run, node and time (None: nobody listens)."""
        return self.events.forward(self.node) if self.events.on else None

    def early_observer(self, node: str, **tags: Any) -> Observer | None:
        """An observer for work started early on behalf of another ``node`` (a speculative
        model call): its events are tagged as ``node``'s, plus ``tags``."""
        return self.events.forward(node, **tags) if self.events.on else None

    def live_text(self) -> TextSink | None:
        """The sink this node's answer streams to (what it shows is traced as this node's)."""
        if isinstance(self.live, WatchedSink) and (observer := self.observer()) is not None:
            self.live.watch(observer)
        return self.live

    def model(self, model: M) -> M:
        """``model`` as the run's chat chose it (``/model``); any other model is itself."""
        return chosen_model(model, self.chat)

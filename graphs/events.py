"""One run's events, the same for graph runs and code workflows: to the observer, to the store.

An event is ``{"event": kind, ..., "run_id", "t"}``. The observer sees it at once; the store
gets the events not yet written at the next ``record``, which a node boundary passes its
delta and frontier to (one append per boundary: that is the durable step). ``park`` is the one
way a run records that it waits for an answer.
"""

from __future__ import annotations

import contextvars
import logging
import time
from typing import Any

from graphs.graph import GraphState, Observer, RunLog

log = logging.getLogger(__name__)
NO_ANSWER: Any = object()  # a node visited without an answer to read
# Inside a node: (the run's events, the node's name, the answer it was woken with, the visit).
node_scope: contextvars.ContextVar[tuple[RunEvents, str, Any, int]] = contextvars.ContextVar(
    "node")


def node_observer() -> Observer | None:
    """Inside a node of an observed run: an observer that tags events with run, node and t."""
    if (scope := node_scope.get(None)) is None or not scope[0].on:
        return None
    return scope[0].forward(scope[1])


def resume_value(default: Any = None) -> Any:
    """Inside a node continued with an answer: the answer it was given, else ``default``."""
    scope = node_scope.get(None)
    return default if scope is None or scope[2] is NO_ANSWER else scope[2]


class RunEvents:
    """The events of run ``run_id``: handed to ``observer``, appended to ``store``."""

    def __init__(self, run_id: str, observer: Observer | None, store: RunLog | None) -> None:
        self.run_id, self.observer, self.store = run_id, observer, store
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

    def forward(self, node: str, *, record: bool = False) -> Observer:
        """An observer for a model or loop inside ``node``: its events join the run's, tagged
        with the node (``record``: stored at once rather than at the node's boundary)."""
        def forward(event: dict[str, Any]) -> None:
            fields = {k: v for k, v in event.items() if k not in ("event", "run_id", "t")}
            self.emit(str(event.get("event", "")), **{**fields, "node": node})
            if record:
                self.record()
        return forward

    def park(self, wait: dict[str, Any], frontier: dict[str, Any]) -> None:
        """Record a wait (``run_waits`` gets its row) with the frontier that waits on it."""
        self.emit("wait", **wait)
        self.record(delta={}, frontier=frontier)

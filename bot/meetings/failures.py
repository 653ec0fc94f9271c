"""A meeting run that fails closes its request, and the failure is logged.

The meeting graph runs as ``MeetingWorkflow``: every way a run moves (its start, a press, an
expiry, recovery) ends in ``start`` or ``proceed``, so a run ending ``failed`` — a node's error
without an ``on_error`` (``propose_meeting`` with ``minutes: "abc"``) or a limit of the engine
(40 presses of *None of these*) — is seen here once it stops: its request, still ``offered``
or ``held``, becomes ``expired`` with the note "the request failed" (the guest may ask again
at once, a held time is free again), and one log line names the run and why it failed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from bot.meetings.store import MeetingStore
from graphs import Graph
from graphs.graph import Observer, RunResult, TextSink
from graphs.runs import GraphWorkflow
from graphs.runs.records import RunRecord
from graphs.runs.store import RunStore

log = logging.getLogger(__name__)
FAILED_NOTE = "the request failed"


class MeetingWorkflow(GraphWorkflow):
    """The meeting graph as a durable workflow that closes the request of a failed run."""

    def __init__(self, graph: Graph, store: MeetingStore, max_steps: int = 25) -> None:
        super().__init__(graph, max_steps=max_steps)
        self.meetings = store

    async def start(self, store: RunStore, input: Mapping[str, Any] | None = None, *,
                    run_id: str | None = None, meta: Mapping[str, Any] | None = None,
                    observer: Observer | None = None,
                    live: TextSink | None = None) -> RunResult:
        result = await super().start(store, input, run_id=run_id, meta=meta,
                                     observer=observer, live=live)
        return self._settled(store, result)

    async def proceed(self, store: RunStore, record: RunRecord,
                      observer: Observer | None = None,
                      live: TextSink | None = None) -> RunResult:
        return self._settled(store, await super().proceed(store, record, observer, live))

    def _settled(self, store: RunStore, result: RunResult) -> RunResult:
        if result.status != "failed" or not result.run_id:
            return result
        meeting_id = str(result.get("meeting_id") or result.run_id)
        closed = self.meetings.set_status(meeting_id, "expired", note=FAILED_NOTE,
                                          only_from=("offered", "held"))
        log.error("meeting run %s failed (%s); its request %s %s", result.run_id,
                  why_failed(store, result), meeting_id,
                  "is closed" if closed else "was not open")
        return result


def why_failed(store: RunStore, result: RunResult) -> str:
    """The nodes' errors, else the run's own (a limit of the engine), in one line."""
    errors = result.get("errors") or {}
    if errors:
        return "; ".join(f"{node}: {error}" for node, error in errors.items())
    ends = [event for event in store.events(result.run_id or "")
            if event["event"] == "graph_end" and event.get("error")]
    return str(ends[-1]["error"]) if ends else "no error recorded"

"""The graph engine: how a graph runs, async and sync node functions over one state dict.

The run loop: START's edges trigger nodes. A triggered node is ready once no
running, waiting or triggered node can still reach it (the join rule; router edges that close
a cycle don't count). Ready nodes run at once (a lone one is awaited inline, without a task);
each returns the keys it merges, and nodes whose runs overlapped may not write the same key. A
finished node triggers its edges and its router's pick, or on failure its ``on_error`` node.
A node whose function takes a second argument is handed its ``graphs.events.RunContext``.
The run ends when nothing runs and nothing is ready. Events go to ``graphs.events``; with a
store, each node boundary is recorded with the frontier (ready, waiting, visits), which is all
``continue_graph`` needs to take a run up again. What a graph is lives in ``graphs.graph``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from typing import Any

from graphs.events import NO_ANSWER, EventKind, RunContext, RunEvents, describe, new_run_id
from graphs.graph import (
    END,
    START,
    Graph,
    GraphRunError,
    GraphState,
    Observer,
    RunLog,
    RunResult,
    Suspend,
    TextSink,
)

__all__ = ["continue_graph", "run_graph"]


class _Run:
    """One run: what is triggered, running and waiting, the visits, and its events."""

    def __init__(self, graph: Graph, state: RunResult, observer: Observer | None,
                 store: RunLog | None, max_steps: int, live: TextSink | None) -> None:
        self.g, self.state = graph.compiled(), state
        self.store, self.max_steps = store, max_steps
        self.live = live  # where the answer streams (nodes get it in their context)
        self.events = RunEvents(state.run_id or "", observer, store)
        self.visits: dict[str, int] = {}
        self.triggered: dict[str, None] = {}  # an ordered set: nodes run in the order triggered
        self.running: dict[str, int] = {}  # node -> the clock when it started
        self.waiting: dict[str, dict[str, Any]] = {}  # parked nodes -> their wait
        self.answers: dict[str, tuple[str, Any]] = {}  # woken nodes -> (wait key, answer)
        self.tasks: dict[str, asyncio.Task[None]] = {}  # the latest task of each node
        self.wake: asyncio.Future[None] | None = None  # done once a task has finished
        self.crash: BaseException | None = None  # what a task raised, for the loop to raise
        self.clock = 0  # counts finished nodes, to tell which runs overlapped
        self.last_write: dict[str, tuple[int, str]] = {}  # key -> (clock, node) of its writer
        self.failed: list[str] = []  # nodes whose failure ends the run (no on_error)
        self.blocked: set[str] = set()  # what those nodes reach: never started now

    def frontier(self, node: str | None = None) -> dict[str, Any]:
        """What is left to run, with ``node``'s visit count (the counts of the whole run are
        the last one recorded for each node)."""
        return self.events.frontier([*self.triggered, *self.running], self.waiting,
                        {node: self.visits.get(node, 0)} if node else {})

    async def go(self) -> RunResult:
        """Start what is ready; when nothing is, wait until a running node has finished."""
        loop = asyncio.get_running_loop()
        try:
            while (ready := self._ready()) or self.running:
                if len(ready) == 1 and not self.running:  # a lone node: awaited inline, no task
                    if self._launch(ready[0]):
                        await self._visit(ready[0])
                    continue
                for name in ready:
                    if self._launch(name):
                        self.tasks[name] = loop.create_task(self._in_task(name))
                if self.running:
                    self.wake = loop.create_future()
                    await self.wake
                if self.crash is not None:
                    raise self.crash
            return self._end()
        except BaseException as exc:
            for task in self.tasks.values():
                task.cancel()
            if isinstance(exc, GraphRunError):
                self._end(error=str(exc))
            raise

    def _ready(self) -> list[str]:
        """Triggered nodes that no active node can still reach (the join rule); after a
        failure only those that do not depend on it, and none once max_steps is spent."""
        if self.failed and sum(self.visits.values()) >= self.max_steps:
            return []
        if len(self.triggered) == 1 and not (self.running or self.waiting or self.blocked):
            return list(self.triggered)  # the common case, a chain: nothing else is active
        ancestors = self.g.ancestors
        return [n for n in self.triggered if n not in self.running and n not in self.blocked
                and ancestors[n].isdisjoint(self.triggered)
                and ancestors[n].isdisjoint(self.running)
                and ancestors[n].isdisjoint(self.waiting)]

    def _launch(self, name: str) -> bool:
        """Count the visit and announce it; a node over a limit fails without running."""
        del self.triggered[name]
        if name not in self.answers:  # a woken wait continues its visit: not a new one
            visits = self.visits.get(name, 0) + 1
            why = self.g.over_limit(name, visits, sum(self.visits.values()), self.max_steps)
            if why is not None:
                self._finish(name, None, GraphRunError(why), attempt=0, took=0.0)
                return False
            self.visits[name] = visits
        self.running[name] = self.clock
        if self.events.on:
            self.events.emit(EventKind.NODE_START, node=name, attempt=1)  # stored at its end
        return True

    async def _in_task(self, name: str) -> None:
        try:
            await self._visit(name)
        except BaseException as exc:  # a collision, a store error, a cancel: the loop raises it
            self.crash = self.crash or exc
        if self.wake is not None and not self.wake.done():
            self.wake.set_result(None)

    async def _visit(self, name: str) -> None:
        """Call the node, retrying transient failures per its policy; then finish it."""
        node, attempt = self.g.nodes[name], 1
        context = None  # built only for a node that takes it (it costs on the hot path)
        if node.takes_context:
            context = RunContext(self.events, name, self.visits.get(name, 1), self.answers.get(
                name, ("", NO_ANSWER))[1], self.state.meta, self.live)
        while True:
            t0 = time.perf_counter()
            try:
                writes = await node.invoke(self.state, context)
            except Suspend as suspend:
                return self._park(name, suspend)
            except Exception as exc:
                took = time.perf_counter() - t0
                delay = None if node.retry is None else node.retry.delay_after(exc, attempt)
                if delay is None:
                    return self._finish(name, None, exc, attempt, took)
                self.events.retrying(name, took, exc, attempt, delay)
                await asyncio.sleep(delay)
                attempt += 1
                self.events.emit(EventKind.NODE_START, node=name, attempt=attempt)
                self.events.record()
            else:
                return self._finish(name, writes, None, attempt, time.perf_counter() - t0)

    def _finish(self, name: str, writes: GraphState | None, error: Exception | None,
                attempt: int, took: float) -> None:
        """Merge a node's writes, trigger what comes next, record the node boundary."""
        started = self.running.pop(name, self.clock)
        taken = self.answers.pop(name, (None, None))[0]
        writes, routes = writes or {}, self.g.plain[name]
        if error is None:
            self._merge(name, started, writes)
            try:
                routes = self.g.next_nodes(name, self.state) if name in self.g.routers \
                    else routes
            except Exception as exc:  # a router belongs to its node: so does its failure
                error = exc
        if error is not None:
            writes = {**writes, "errors": {**self.state.get("errors", {}), name: describe(error)}}
            self.state["errors"] = writes["errors"]
            on_error = self.g.nodes[name].on_error
            # Once max_steps is used up nothing more may run, on_error targets included.
            if on_error is not None and sum(self.visits.values()) < self.max_steps:
                routes = [(on_error, "on_error")]
            else:
                routes = []
                self.failed.append(name)
                self.blocked |= self.g.reach[name]
        for target, _ in routes:
            if target != END:
                self.triggered[target] = None
        if self.events.on:
            fields = {} if error is None else {"error": describe(error)}
            self.events.emit(EventKind.NODE_END, node=name, duration_s=took, wrote=list(writes),
                             attempt=attempt, **fields)
            for target, label in routes:
                if label is not None:
                    self.events.emit(EventKind.ROUTE, router=name, target=target, label=label)
            self.events.record(writes, self.frontier(name), taken)

    def _merge(self, name: str, started: int, writes: GraphState) -> None:
        """Merge writes, refusing a key whose last writer finished while this node ran."""
        self.clock += 1
        for key in writes:  # of the writers of a key, the last finished latest
            writer = self.last_write.get(key)
            if writer is not None and writer[0] > started:
                raise GraphRunError(f"state collision on {key!r}: nodes {writer[1]!r} and "
                                    f"{name!r} ran at the same time and both wrote it; "
                                    "parallel branches must write disjoint keys")
            self.last_write[key] = (self.clock, name)
        self.state.update(writes)

    def _park(self, name: str, suspend: Suspend) -> None:
        """The node waits for an answer, blocking what it reaches, until it is woken."""
        if self.store is None:
            raise GraphRunError(f"node {name!r} waits for an answer: that needs a store")
        self.running.pop(name, None)
        taken = self.answers.pop(name, (None, None))[0]
        key = f"{name}:{self.visits.get(name, 1)}"
        self.waiting[name] = {"run_id": self.events.run_id, "node": name, "key": key,
                              **suspend.wait}
        self.events.park(self.waiting[name], self.frontier(name), taken)

    def _end(self, error: str | None = None) -> RunResult:
        """Settle the status; report it, with what a failed node kept from running."""
        failed = bool(self.failed) or error is not None
        self.state.status = "failed" if failed else "waiting" if self.waiting else "completed"
        self.state.waits = list(self.waiting.values())
        if self.events.on:
            blocked = sorted((self.blocked - self.visits.keys()) | self.triggered.keys())
            fields = {"error": error} if error else {"blocked": blocked} if blocked else {}
            self.events.end(self.state.status, **fields)
        return self.state


async def run_graph(graph: Graph, state: GraphState, observer: Observer | None = None,
                    max_steps: int = 25, store: RunLog | None = None, run_id: str | None = None,
                    meta: Mapping[str, Any] | None = None,
                    live: TextSink | None = None) -> RunResult:
    """Run ``graph`` from START on a copy of ``state``; returns the final state (a RunResult)."""
    result = RunResult(state, meta)
    if observer is not None or store is not None:
        result.run_id = run_id or new_run_id()
    run = _Run(graph, result, observer, store, max_steps, live)  # checks the graph first
    run.events.begin(graph.name, result, max_steps)
    run.triggered = {target: None for target, _ in graph.next_nodes(START, result) if target != END}
    run.events.record({}, run.frontier())
    return await run.go()


async def continue_graph(graph: Graph, state: RunResult, store: RunLog, *, ready: list[str],
                         waiting: dict[str, dict[str, Any]], visits: Mapping[str, int],
                         answers: Mapping[str, tuple[str, Any]], max_steps: int = 25,
                         observer: Observer | None = None,
                         live: TextSink | None = None) -> RunResult:
    """Take up a recorded run from its frontier: woken waits (node -> (wait key, answer)) run
    first, continuing their visit, then what was ready; finished nodes never run again."""
    run = _Run(graph, state, observer, store, max_steps, live)
    run.visits, run.answers = dict(visits), dict(answers)
    run.waiting = {n: w for n, w in waiting.items() if n not in answers}
    run.triggered = dict.fromkeys([*answers, *ready])
    run.events.begin(graph.name, None, max_steps)
    run.events.record()
    return await run.go()

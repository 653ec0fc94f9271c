"""The graph engine: how a graph runs, async and sync node functions over one state dict.

The run loop (design §2): START's edges trigger nodes. A triggered node is ready once no
running, waiting or triggered node can still reach it (the join rule; router edges that close
a cycle don't count). Ready nodes run at once (a lone one is awaited inline, without a task);
each returns the keys it merges, and nodes whose runs overlapped may not write the same key. A
finished node triggers its edges and its router's pick, or on failure its ``on_error`` node.
The run ends when nothing runs and nothing is ready. An observer sees every event; a store
records each node boundary so that the run can be continued. What a graph is, and its build
checks, is ``graphs.graph``; nothing else of ours is imported.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import time
import uuid
from collections.abc import Mapping
from typing import Any

from graphs.graph import (
    END,
    START,
    Graph,
    GraphBuildError,
    GraphRunError,
    GraphState,
    Node,
    NodeFn,
    Observer,
    RetryPolicy,
    Route,
    RouteFn,
    RunResult,
    RunStore,
    Suspend,
    is_transient,
)

__all__ = ["END", "START", "Graph", "GraphBuildError", "GraphRunError", "GraphState", "Node",
           "NodeFn", "Observer", "RetryPolicy", "RouteFn", "RunResult", "RunStore", "Suspend",
           "is_transient", "node_observer", "resume", "resume_value", "run_graph"]

log = logging.getLogger(__name__)
_NO_ANSWER: Any = object()


_node_ctx: contextvars.ContextVar[tuple[_Run, str, Any]] = contextvars.ContextVar("graph_node")


def node_observer() -> Observer | None:
    """Inside a node of an observed run: an observer that tags events with run, node and t."""
    if (ctx := _node_ctx.get(None)) is None or not ctx[0].logging:
        return None
    run, node, _ = ctx

    def forward(event: dict[str, Any]) -> None:
        fields = {**event, "node": node}
        run.emit(str(fields.pop("event", "")), **fields)
    return forward


def resume_value(default: Any = None) -> Any:
    """Inside a node continued by ``resume``: the answer it was given, else ``default``."""
    ctx = _node_ctx.get(None)
    return default if ctx is None or ctx[2] is _NO_ANSWER else ctx[2]


class _Run:
    """One run: what is triggered, running and waiting, the visits, events not yet stored."""

    def __init__(self, graph: Graph, state: RunResult, observer: Observer | None,
                 store: RunStore | None, max_steps: int) -> None:
        self.g, self.state, self.run_id = graph.compiled(), state, state.run_id or ""
        self.observer, self.store, self.max_steps = observer, store, max_steps
        self.logging = observer is not None or store is not None  # else no events are built
        self.visits: dict[str, int] = {}
        self.triggered: dict[str, None] = {}  # an ordered set: nodes run in the order triggered
        self.running: dict[str, int] = {}  # node -> the clock when it started
        self.waiting: dict[str, dict[str, Any]] = {}  # parked nodes -> their wait
        self.answers: dict[str, Any] = {}  # resumed waits -> their answer
        self.tasks: dict[str, asyncio.Task[None]] = {}  # the latest task of each node
        self.wake: asyncio.Future[None] | None = None  # done once a task has finished
        self.crash: BaseException | None = None  # what a task raised, for the loop to raise
        self.clock = 0  # counts finished nodes, to tell which runs overlapped
        self.last_write: dict[str, tuple[int, str]] = {}  # key -> (clock, node) of its writer
        self.pending: list[dict[str, Any]] = []  # events for the store's next append
        self.failed: str | None = None  # the node whose failure ends the run

    def restore(self, ready: list[str], waiting: dict[str, dict[str, Any]],
                visits: dict[str, int], answers: dict[str, Any]) -> None:
        """Take up a recorded frontier; answered waits run first, continuing their visit."""
        self.visits, self.answers = dict(visits), dict(answers)
        self.waiting = {n: w for n, w in waiting.items() if n not in answers}
        self.triggered = dict.fromkeys([*answers, *ready])

    def emit(self, kind: str, **fields: Any) -> None:
        event = {"event": kind, **fields, "run_id": self.run_id, "t": time.time()}
        if self.observer is not None:
            try:
                self.observer(event)
            except Exception:  # a broken trace must not break the run
                log.exception("graph observer failed on %s", kind)
        if self.store is not None:
            self.pending.append(event)

    def record(self, delta: GraphState | None = None) -> None:
        """Store the pending events; with a delta it is a node boundary: add the frontier."""
        if self.store is not None:
            events, self.pending = self.pending, []
            frontier = None if delta is None else {
                "ready": [*self.triggered, *self.running],
                "waiting": {n: w["key"] for n, w in self.waiting.items()}}
            self.store.append(self.run_id, events, delta, frontier)

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
        """Triggered nodes that no active node can still reach (the join rule)."""
        if self.failed is not None:
            return []
        if len(self.triggered) == 1 and not self.running and not self.waiting:
            return list(self.triggered)  # the common case, a chain: nothing else is active
        ancestors = self.g.ancestors
        return [n for n in self.triggered if n not in self.running
                and ancestors[n].isdisjoint(self.triggered)
                and ancestors[n].isdisjoint(self.running)
                and ancestors[n].isdisjoint(self.waiting)]

    def _launch(self, name: str) -> bool:
        """Count the visit and announce it; a node over a limit fails without running."""
        del self.triggered[name]
        if name not in self.answers:  # a resumed wait continues its visit: not a new one
            visits, limit = self.visits.get(name, 0) + 1, self.g.nodes[name].max_visits
            why = (f"max_steps={self.max_steps} reached before {name!r}"
                   if sum(self.visits.values()) >= self.max_steps
                   else f"{name!r} exceeded max_visits={limit}" if visits > limit else None)
            if why is not None:
                self._finish(name, None, GraphRunError(why), attempt=0, took=0.0)
                return False
            self.visits[name] = visits
        self.running[name] = self.clock
        if self.logging:
            self.emit("node_start", node=name, attempt=1)  # stored with the node's end
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
        node, attempt, answer = self.g.nodes[name], 1, self.answers.get(name, _NO_ANSWER)
        # Only nodes that may read it need the context (it costs on the hot path).
        token = _node_ctx.set((self, name, answer)) if self.logging or self.answers else None
        try:
            while True:
                t0 = time.perf_counter()
                try:
                    writes = await self._call(node)
                except Exception as exc:
                    took, policy = time.perf_counter() - t0, node.retry
                    if (isinstance(exc, Suspend) or policy is None or attempt >= policy.max_attempts
                            or not (policy.retry_on or is_transient)(exc)):
                        return self._finish(name, None, exc, attempt, took)
                    delay = min(policy.max_delay, policy.delay * policy.backoff ** (attempt - 1))
                    self.emit("node_end", node=name, duration_s=took, wrote=[],  # "retrying"
                              error=_describe(exc), attempt=attempt, retry_in=delay)
                    self.record()
                    await asyncio.sleep(delay)
                    attempt += 1
                    self.emit("node_start", node=name, attempt=attempt)
                    self.record()
                else:
                    return self._finish(name, writes, None, attempt, time.perf_counter() - t0)
        finally:
            if token is not None:
                _node_ctx.reset(token)

    async def _call(self, node: Node) -> GraphState:
        if node.is_async and node.timeout is None:  # the hot path: nothing to wrap
            result: Any = await node.fn(self.state)  # type: ignore[misc]
        else:
            result = node.fn(self.state) if node.is_async else asyncio.to_thread(
                node.fn, self.state)
            async with asyncio.timeout(node.timeout):
                while inspect.isawaitable(result):
                    result = await result
        if result.__class__ is not dict and not isinstance(result, dict | None):
            raise TypeError(f"node {node.name!r} returned {type(result).__name__}, not a dict")
        return result or {}

    def _finish(self, name: str, writes: GraphState | None, error: Exception | None,
                attempt: int, took: float) -> None:
        """Merge a node's writes, trigger what comes next, record the node boundary."""
        started = self.running.pop(name, self.clock)
        self.answers.pop(name, None)
        if isinstance(error, Suspend):
            return self._park(name, error)
        writes, routes = writes or {}, self.g.plain[name]
        if error is None:
            self._merge(name, started, writes)
            try:
                routes = self.next_nodes(name) if name in self.g.routers else routes
            except Exception as exc:  # a router belongs to its node: so does its failure
                error = exc
        if error is not None:
            writes = {**writes, "errors": {**self.state.get("errors", {}), name: _describe(error)}}
            self.state["errors"] = writes["errors"]
            on_error = self.g.nodes[name].on_error
            # Once max_steps is used up nothing more may run, on_error targets included.
            if on_error is not None and sum(self.visits.values()) < self.max_steps:
                routes = [(on_error, "on_error")]
            else:
                routes, self.failed = [], self.failed or name
        for target, _ in routes:
            if target != END:
                self.triggered[target] = None
        if self.logging:
            fields = {} if error is None else {"error": _describe(error)}
            self.emit("node_end", node=name, duration_s=took, wrote=list(writes),
                      attempt=attempt, **fields)
            for target, label in routes:
                if label is not None:
                    self.emit("route", router=name, target=target, label=label)
            self.record(delta=writes)

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
        """The node waits for an answer, blocking what it reaches, until it is resumed."""
        if self.store is None:
            raise GraphRunError(f"node {name!r} waits for an answer: that needs a store")
        key = f"{name}:{self.visits.get(name, 1)}"
        self.waiting[name] = {"run_id": self.run_id, "node": name, "key": key, **suspend.wait}
        self.emit("wait", **self.waiting[name])
        self.record(delta={})

    def next_nodes(self, name: str) -> list[Route]:
        """Where a finished node leads: its plain edges, then its router's pick (labelled)."""
        if name not in self.g.routers:
            return self.g.plain[name]
        route, targets = self.g.routers[name]
        if (label := route(self.state)) not in targets:
            raise GraphRunError(f"router of {name!r} chose {label!r}, not one of "
                                f"{sorted(targets)}")
        return [*self.g.plain[name], (targets[label], label)]

    def _end(self, error: str | None = None) -> RunResult:
        """Settle the status; report it, with what a failed node kept from running."""
        failed = self.failed is not None or error is not None
        status = "failed" if failed else "waiting" if self.waiting else "completed"
        self.state.status, self.state.waits = status, list(self.waiting.values())
        if self.logging:
            blocked = [] if self.failed is None else sorted(
                (self.g.reach[self.failed] - self.visits.keys()) | self.triggered.keys())
            fields = {"error": error} if error else {"blocked": blocked} if blocked else {}
            self.emit("graph_end", status=status, **fields)
            self.record()
        return self.state


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


async def run_graph(graph: Graph, state: GraphState, observer: Observer | None = None,
                    max_steps: int = 25, store: RunStore | None = None, run_id: str | None = None,
                    meta: Mapping[str, Any] | None = None) -> RunResult:
    """Run ``graph`` from START on a copy of ``state``; returns the final state (a RunResult)."""
    result = RunResult(state, meta)
    if observer is not None or store is not None:
        result.run_id = run_id or uuid.uuid4().hex[:16]
    run = _Run(graph, result, observer, store, max_steps)  # checks the graph first
    if store is not None:
        store.begin(run.run_id, graph, result, max_steps)
    if run.logging:
        run.emit("graph_start", workflow=graph.name)
    run.triggered = {target: None for target, _ in run.next_nodes(START) if target != END}
    run.record(delta={})
    return await run.go()


async def resume(store: RunStore, run_id: str, answer: Any, by: str = "owner") -> RunResult:
    """Continue a waiting run with ``answer`` from ``by``; see ``graphs.durable.resume``."""
    return await store.resume(run_id, answer, by)

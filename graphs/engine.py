"""The graph engine: run async/sync node functions over one shared state dict (design §2).

A triggered node runs once no other running, waiting or triggered node can still reach it (the
join rule; router edges that close a cycle don't count). Ready nodes run concurrently, each
returns the keys it merges, and nodes whose runs overlapped may not write the same key. An
optional observer gets every event; an optional store (``graphs.store``) records each node
boundary (what it wrote, the frontier left) so a run can be continued. Imports nothing of ours.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

START, END = "__start__", "__end__"
GraphState = dict[str, Any]
NodeFn = Callable[[GraphState], "GraphState | Awaitable[GraphState | None] | None"]
RouteFn = Callable[[GraphState], str]
Observer = Callable[[dict[str, Any]], None]
log = logging.getLogger(__name__)
_NO_ANSWER: Any = object()


class GraphBuildError(ValueError):
    """The graph is wrong (unknown node, edge out of END, plain cycle...); names the nodes."""


class GraphRunError(RuntimeError):
    """A run broke a rule (state collision, a limit, non-JSON value); names node and key."""


class Suspend(Exception):  # a signal, not an error: the run parks until an answer arrives
    """Raised by a node (see ``graphs.nodes.human_node``) to wait for an answer."""

    def __init__(self, **wait: Any) -> None:
        super().__init__("waiting for an answer")
        self.wait = wait


@dataclass
class RetryPolicy:
    """Retry transient failures; before attempt n+1 wait ``delay * backoff**(n-1)`` (capped)."""

    max_attempts: int = 3
    delay: float = 0.2
    backoff: float = 2.0
    max_delay: float = 10.0
    retry_on: Callable[[BaseException], bool] | None = None  # default: is_transient


def is_transient(exc: BaseException) -> bool:
    """Time-outs, connection errors, rate limits and 5xx, duck-typed so no SDK is imported."""
    if isinstance(exc, TimeoutError | ConnectionError):
        return True
    if isinstance(status := getattr(exc, "status_code", None), int):
        return status in (408, 409, 429) or status >= 500
    names = ("TimeoutError", "ConnectionError", "TimeoutException", "ConnectError")
    return any(cls.__name__.endswith(names) for cls in type(exc).__mro__)


@dataclass
class Node:
    """One step: ``fn(state)`` returns the keys to merge (a sync ``fn`` runs in a thread)."""

    name: str
    fn: NodeFn
    max_visits: int = 1
    on_error: str | None = None
    timeout: float | None = None
    retry: RetryPolicy | None = None
    is_async: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        call = getattr(self.fn, "__call__", None)  # noqa: B004 - async callable objects too
        self.is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(call)


class RunStore(Protocol):
    """What the engine needs from a durable store; ``graphs.store.RunStore`` implements it."""

    def begin(self, run_id: str, graph: Graph, state: RunResult, max_steps: int) -> None: ...
    def append(self, run_id: str, events: list[dict[str, Any]], delta: GraphState | None,
               frontier: dict[str, Any] | None, status: str | None) -> None: ...
    async def resume(self, run_id: str, answer: Any, by: str) -> RunResult: ...


class RunResult(dict[str, Any]):
    """The final state, plus ``run_id``, ``status``, open ``waits`` and the caller's ``meta``."""

    run_id: str | None = None
    status = "completed"  # running | waiting | completed | failed | cancelled
    already_answered = False  # set by resume when the wait had its answer already

    def __init__(self, state: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> None:
        super().__init__(state)
        self.meta, self.waits = dict(meta or {}), list[dict[str, Any]]()


class Graph:
    """Nodes, plain edges and routers; checked and analysed once, before the first run."""

    def __init__(self, name: str = "graph") -> None:
        self.name, self.nodes, self.edges = name, dict[str, Node](), dict[str, list[str]]()
        self.routers: dict[str, tuple[RouteFn, dict[str, str]]] = {}
        self._compiled: _Compiled | None = None

    def add_node(self, node: Node) -> None:
        if node.name in self.nodes or node.name in (START, END):
            raise GraphBuildError(f"node name {node.name!r} is already taken")
        self.nodes[node.name], self._compiled = node, None

    def add_edge(self, src: str, dst: str) -> None:
        self.edges.setdefault(src, []).append(dst)
        self._compiled = None

    def add_router(self, src: str, route: RouteFn, targets: Mapping[str, str]) -> None:
        if src in self.routers:
            raise GraphBuildError(f"node {src!r} already has a router")
        self.routers[src], self._compiled = (route, dict(targets)), None

    def compiled(self) -> _Compiled:
        self._compiled = self._compiled or _Compiled(self)
        return self._compiled


class _Compiled:
    """Build-time checks and the reachability the join rule reads (design §2)."""

    def __init__(self, g: Graph) -> None:
        known = {START, *g.nodes}
        for src in [*g.edges, *g.routers]:
            if src not in known:
                raise GraphBuildError(f"edge out of {src!r}: " + (
                    "END has no way out" if src == END else f"{src!r} is not a node"))
        plain = {n: g.edges.get(n, []) for n in known}
        cond = {n: [*(g.routers[n][1].values() if n in g.routers else ()),
                    *([g.nodes[n].on_error] if n in g.nodes and g.nodes[n].on_error else [])]
                for n in known}
        for src in known:
            for dst in {*plain[src], *cond[src]} - {*g.nodes, END}:
                raise GraphBuildError(f"edge {src!r} -> {dst!r}: {dst!r} is not a node")
        full = {n: [d for d in [*plain[n], *cond[n]] if d != END] for n in known}
        if unreachable := sorted(set(g.nodes) - _reach(START, full)):
            raise GraphBuildError(f"START cannot reach node(s) {', '.join(unreachable)}")
        # A conditional edge whose target can reach back to its source closes a cycle.
        self.back = {(n, d) for n in known for d in cond[n] if d != END and n in _reach(d, full)}
        forward = {n: [d for d in full[n] if (n, d) not in self.back] for n in known}
        self.reach = {n: _reach(n, forward) for n in known}
        for n in g.nodes:
            if n in self.reach[n]:
                raise GraphBuildError(f"cycle of plain edges through {n!r}: a cycle needs a "
                                      "router edge to leave it")
        self.ancestors = {x: frozenset(n for n in g.nodes if x in self.reach[n]) for x in g.nodes}
        self.plain: dict[str, list[tuple[str, str | None]]] = {
            n: [(d, None) for d in plain[n]] for n in known}


def _reach(src: str, adj: dict[str, list[str]]) -> set[str]:
    seen, todo = set[str](), list(adj.get(src, []))
    while todo:
        if (n := todo.pop()) not in seen:
            seen.add(n)
            todo += adj.get(n, [])
    return seen


@dataclass
class _Outcome:
    writes: GraphState | None = None
    error: BaseException | None = None
    attempt: int = 1
    duration_s: float = 0.0
    suspend: Suspend | None = None


_node_ctx: contextvars.ContextVar[tuple[_Run, str, Any]] = contextvars.ContextVar("graph_node")


def node_observer() -> Observer | None:
    """Inside a node of an observed run: an observer that tags events with run, node and t."""
    if (ctx := _node_ctx.get(None)) is None or not ctx[0].logging:
        return None
    run, node = ctx[0], ctx[1]

    def forward(event: dict[str, Any]) -> None:
        fields = {**event, "node": node}
        run.emit(str(fields.pop("event", "")), **fields)
    return forward


def resume_value(default: Any = None) -> Any:
    """Inside a node continued by ``resume``: the answer it was given, else ``default``."""
    ctx = _node_ctx.get(None)
    return default if ctx is None or ctx[2] is _NO_ANSWER else ctx[2]


class _Run:
    """One run's bookkeeping: the ready queue, what runs and waits, visits, pending events."""

    def __init__(self, graph: Graph, state: RunResult, observer: Observer | None,
                 store: RunStore | None, max_steps: int) -> None:
        self.g, self.c, self.state, self.run_id = graph, graph.compiled(), state, state.run_id
        self.observer, self.store, self.logging = observer, store, bool(observer or store)
        self.max_steps, self.steps, self.visits = max_steps, 0, dict[str, int]()
        self.triggered: dict[str, None] = {}  # an ordered set: runs in the order triggered
        self.running: dict[str, int] = {}  # node -> tick when it started (for collisions)
        self.waiting: dict[str, dict[str, Any]] = {}  # parked nodes -> their wait
        self.answers: dict[str, Any] = {}  # resumed waits -> their answer
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.finished: list[tuple[str, _Outcome]] = []
        self.wake: asyncio.Future[None] | None = None
        self.tick, self.recent = 0, list[tuple[int, str, frozenset[str]]]()
        self.pending: list[dict[str, Any]] = []
        self.failed: str | None = None
        self.hard_stop = False

    def restore(self, ready: list[str], waiting: dict[str, dict[str, Any]],
                visits: dict[str, int], answers: dict[str, Any]) -> None:
        """Take up a recorded frontier; answered waits run first, continuing their visit."""
        self.visits, self.steps, self.answers = dict(visits), sum(visits.values()), dict(answers)
        self.waiting = {n: w for n, w in waiting.items() if n not in answers}
        self.triggered = dict.fromkeys([*answers, *ready])

    def emit(self, kind: str, record: bool = False, /, **fields: Any) -> None:
        """Hand one event to the observer; ``record`` appends it (and what's pending) now."""
        event = {"event": kind, **fields, "run_id": self.run_id, "t": time.time()}
        if self.observer is not None:
            try:
                self.observer(event)
            except Exception:  # a broken trace must not break the run
                log.exception("graph observer failed on %s", kind)
        if self.store is not None:
            self.pending.append(event)
            if record:
                self.record()

    def record(self, delta: GraphState | None = None, status: str | None = None) -> None:
        """Append the pending events; with a delta also the frontier (a node boundary)."""
        if self.store is not None and self.run_id is not None:
            events, self.pending = self.pending, []
            frontier = None if delta is None else {
                "ready": [*self.triggered, *self.running],
                "waiting": {n: w["key"] for n, w in self.waiting.items()}}
            self.store.append(self.run_id, events, delta, frontier, status)

    async def go(self) -> RunResult:
        loop = asyncio.get_running_loop()
        try:
            while True:
                ready = self._ready() if self.failed is None else []
                if len(ready) == 1 and not self.running:  # a lone node: awaited inline, no task
                    if self._launch(name := ready[0]):
                        self._finish(name, await self._attempts(name))
                    continue
                for name in ready:
                    if self._launch(name):
                        self.tasks[name] = loop.create_task(self._in_task(name))
                if not self.running:
                    return self._end()
                if not self.finished:
                    self.wake = loop.create_future()
                    await self.wake
                while self.finished:
                    self._finish(*self.finished.pop(0))
        except BaseException as exc:
            for task in self.tasks.values():
                task.cancel()
            if isinstance(exc, GraphRunError):
                self.state.status = "failed"
                if self.logging:
                    self.emit("graph_end", status="failed", error=str(exc))
                    self.record(status="failed")
            raise

    def _ready(self) -> list[str]:
        if len(self.triggered) == 1 and not self.running and not self.waiting:
            return list(self.triggered)
        active = self.triggered.keys() | self.running.keys() | self.waiting.keys()
        return [n for n in self.triggered
                if n not in self.running and self.c.ancestors[n].isdisjoint(active)]

    def _launch(self, name: str) -> bool:
        """Count the visit and announce the node; a broken limit fails it without running."""
        del self.triggered[name]
        if name not in self.answers:  # a resumed wait continues its visit
            visits, limit = self.visits.get(name, 0) + 1, self.g.nodes[name].max_visits
            self.hard_stop = self.steps >= self.max_steps
            if self.hard_stop or visits > limit:
                why = (f"max_steps={self.max_steps} reached before {name!r}" if self.hard_stop
                       else f"{name!r} exceeded max_visits={limit}")
                self._finish(name, _Outcome(error=GraphRunError(why), attempt=0))
                return False
            self.visits[name], self.steps = visits, self.steps + 1
        self.running[name] = self.tick
        if self.logging:
            self.emit("node_start", node=name, attempt=1)  # stored with the node's end
        return True

    async def _in_task(self, name: str) -> None:
        try:
            outcome = await self._attempts(name)
        except BaseException as exc:  # cancelled, or worse: _finish re-raises it
            outcome = _Outcome(error=exc)
        self.finished.append((name, outcome))
        if self.wake is not None and not self.wake.done():
            self.wake.set_result(None)

    async def _attempts(self, name: str) -> _Outcome:
        """Call the node, retrying transient failures per its policy, with backoff."""
        node, attempt, answer = self.g.nodes[name], 1, self.answers.get(name, _NO_ANSWER)
        token = _node_ctx.set((self, name, answer)) if self.logging or self.answers else None
        try:
            while True:
                t0 = time.perf_counter()
                try:
                    return _Outcome(await self._call(node), None, attempt, time.perf_counter() - t0)
                except Suspend as wait:
                    return _Outcome(attempt=attempt, suspend=wait)
                except Exception as exc:
                    took, policy = time.perf_counter() - t0, node.retry
                    if (policy is None or attempt >= policy.max_attempts
                            or not (policy.retry_on or is_transient)(exc)):
                        return _Outcome(None, exc, attempt, took)
                    delay = min(policy.max_delay, policy.delay * policy.backoff ** (attempt - 1))
                    # the node is "retrying" until its next node_start
                    self.emit("node_end", True, node=name, duration_s=took, wrote=[],
                              error=_describe(exc), attempt=attempt, retry_in=delay)
                    await asyncio.sleep(delay)
                    attempt += 1
                    self.emit("node_start", True, node=name, attempt=attempt)
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

    def _finish(self, name: str, out: _Outcome) -> None:
        """Merge a node's writes, trigger its next nodes, record the boundary."""
        started, node = self.running.pop(name, self.tick), self.g.nodes[name]
        if self.tasks or self.answers:
            self.tasks.pop(name, None)
            self.answers.pop(name, None)
        if out.suspend is not None:
            return self._park(name, out.suspend)
        writes, routes = out.writes or {}, self.c.plain[name]
        if out.error is None:
            if self.running or self.recent:  # only overlapping runs can collide
                self._check_disjoint(name, started, writes)
            self.state.update(writes)
            try:
                routes = self.transitions(name) if name in self.g.routers else routes
            except Exception as exc:
                out.error = exc
        if out.error is not None:
            if not isinstance(out.error, Exception):  # cancelled or worse: not a node failure
                raise out.error
            errors = self.state["errors"] = {**self.state.get("errors", {}),
                                             name: _describe(out.error)}
            writes = {**writes, "errors": errors}
            routes = [(node.on_error, "on_error")] if node.on_error and not self.hard_stop else []
            self.failed = self.failed or (None if routes else name)
        for target, _ in routes:
            if target != END:
                self.triggered[target] = None
        if self.logging:
            error = {} if out.error is None else {"error": _describe(out.error)}
            self.emit("node_end", node=name, duration_s=out.duration_s, wrote=list(writes),
                      attempt=out.attempt, **error)
            for target, label in routes:
                if label is not None:
                    self.emit("route", router=name, target=target, label=label)
            self.record(delta=writes)

    def _park(self, name: str, suspend: Suspend) -> None:
        """The node asked for an answer: it waits (and blocks what it reaches) until resumed."""
        if self.store is None:
            raise GraphRunError(f"node {name!r} waits for an answer: that needs a store")
        wait = {"run_id": self.run_id, "node": name, "key": f"{name}:{self.visits.get(name, 1)}",
                **suspend.wait}
        self.waiting[name] = wait
        self.emit("wait", **wait)
        self.record(delta={})

    def transitions(self, name: str) -> list[tuple[str, str | None]]:
        """Where a finished node leads: its plain edges, then its router's pick (with label)."""
        routes = list(self.c.plain[name])
        if name in self.g.routers:
            route, targets = self.g.routers[name]
            if (label := route(self.state)) not in targets:
                raise GraphRunError(f"router of {name!r} chose {label!r}, not one of "
                                    f"{sorted(targets)}")
            routes.append((targets[label], label))
        return routes

    def _check_disjoint(self, name: str, started: int, writes: GraphState) -> None:
        for tick, other, keys in self.recent:
            if tick > started and not keys.isdisjoint(writes):
                raise GraphRunError(f"state collision on {sorted(keys.intersection(writes))[0]!r}"
                                    f": nodes {other!r} and {name!r} ran at the same time and "
                                    "both wrote it; parallel branches must write disjoint keys")
        self.tick += 1
        if self.running:  # when a node ends alone, nothing running can overlap the past
            self.recent.append((self.tick, name, frozenset(writes)))
        else:
            self.recent.clear()

    def _end(self) -> RunResult:
        status = "failed" if self.failed else "waiting" if self.waiting else "completed"
        self.state.status, self.state.waits = status, list(self.waiting.values())
        if self.logging:
            blocked = [] if not self.failed else sorted(  # what the failure keeps from running
                (self.c.reach[self.failed] - self.visits.keys()) | self.triggered.keys())
            self.emit("graph_end", status=status, **({"blocked": blocked} if blocked else {}))
            self.record(status=status)
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
    if store is not None and result.run_id is not None:
        store.begin(result.run_id, graph, result, max_steps)
    run = _Run(graph, result, observer, store, max_steps)
    if run.logging:
        run.emit("graph_start", workflow=graph.name)
    run.triggered = {t: None for t, _ in run.transitions(START) if t != END}
    run.record(delta={})
    return await run.go()


async def resume(store: RunStore, run_id: str, answer: Any, by: str = "owner") -> RunResult:
    """Continue a waiting run with ``answer`` from ``by``; see ``graphs.store.RunStore.resume``."""
    return await store.resume(run_id, answer, by)

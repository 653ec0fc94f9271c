"""What a graph is: nodes, edges, routers, the build-time checks, and the run's vocabulary.

A ``Graph`` is checked and analysed once, before its first run (``compiled``): unknown nodes
or targets, edges out of END, nodes START cannot reach and cycles of plain edges raise a
``GraphBuildError`` naming the nodes; what each node can reach is worked out for the join
rule. How a graph runs is ``graphs.engine``. Imports nothing of ours.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

START, END = "__start__", "__end__"
RunStatus = Literal["running", "waiting", "completed", "failed", "cancelled"]
GraphState = dict[str, Any]
NodeFn = Callable[..., "GraphState | Awaitable[GraphState | None] | None"]  # (state[, context])
RouteFn = Callable[[GraphState], str]
Observer = Callable[[dict[str, Any]], None]
TextSink = Callable[[str], None]  # where an answer streams, the text so far (``graphs.live``)
Route = tuple[str, str | None]  # (target, label); the label is None for a plain edge


class GraphBuildError(ValueError):
    """The graph is wrong (unknown node, edge out of END, plain cycle...); names the nodes."""


class GraphRunError(RuntimeError):
    """A run broke a rule (state collision, a limit, non-JSON value); names node and key."""


class Suspend(BaseException):  # a signal, not an error: ``except Exception`` cannot eat it
    """Raised to wait for an answer: by a node (``graphs.nodes.human_node``) or a code
    workflow's ``ask``. ``wait`` holds the question, its options and ``expires_at``."""

    def __init__(self, **wait: Any) -> None:
        super().__init__("waiting for an answer")
        self.wait = wait


@dataclass(frozen=True)
class RetryPolicy:
    """Retry transient failures; before attempt n+1 wait ``delay * backoff**(n-1)`` (capped).

    The one policy for a node (``Node.retry``) and for a model call (``bot.models.retry``);
    a server's own retry-after is kept when it asks for at most ``max_retry_after`` seconds.
    """

    max_attempts: int = 3
    delay: float = 0.2
    backoff: float = 2.0
    max_delay: float = 10.0
    retry_on: Callable[[BaseException], bool] | None = None  # default: is_transient
    max_retry_after: float = 30.0  # asked to wait longer than this: give up instead

    def wait_before(self, attempt: int, retry_after: float | None = None) -> float | None:
        """Seconds to wait after failed attempt ``attempt``; None means give up now."""
        if retry_after is not None:
            return retry_after if retry_after <= self.max_retry_after else None
        return float(min(self.max_delay, self.delay * self.backoff ** (attempt - 1)))

    def delay_after(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before trying again after ``exc`` ended attempt ``attempt``; None
        when the failure is for good (not transient, or the attempts are used up)."""
        if attempt >= self.max_attempts or not (self.retry_on or is_transient)(exc):
            return None
        return self.wait_before(attempt)


def is_transient(exc: BaseException) -> bool:
    """Time-outs, connection errors, 408/409/429 and 5xx; duck-typed, so no SDK is imported."""
    names = ("TimeoutError", "ConnectionError", "TimeoutException", "ConnectError")
    if any(cls.__name__.endswith(names) for cls in type(exc).__mro__):
        return True
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and (status in (408, 409, 429) or status >= 500)


@dataclass
class Node:
    """One step: ``fn(state)`` returns the keys to merge (a sync ``fn`` runs in a thread);
    a ``fn(state, context)`` is also handed its ``graphs.events.RunContext``."""

    name: str
    fn: NodeFn
    max_visits: int = 1
    on_error: str | None = None
    timeout: float | None = None
    retry: RetryPolicy | None = None
    is_async: bool = field(init=False, repr=False)
    takes_context: bool = field(init=False, repr=False)

    def __post_init__(self) -> None:
        call = getattr(self.fn, "__call__", None)  # noqa: B004 - async callable objects too
        self.is_async = inspect.iscoroutinefunction(self.fn) or inspect.iscoroutinefunction(call)
        self.takes_context = takes_two(self.fn)

    async def invoke(self, state: GraphState, context: Any = None) -> GraphState:
        """Call ``fn`` on the state (and ``context``, if it takes one; a sync one in a thread;
        within ``timeout`` if set) and check that it returned the keys to merge (a dict, or
        None for nothing)."""
        fn: Any = self.fn
        if self.is_async and self.timeout is None:  # the hot path: nothing to wrap
            result: Any = await (fn(state, context) if self.takes_context else fn(state))
        else:
            args = (state, context) if self.takes_context else (state,)
            result = fn(*args) if self.is_async else asyncio.to_thread(fn, *args)
            async with asyncio.timeout(self.timeout):
                while inspect.isawaitable(result):
                    result = await result
        if result.__class__ is not dict and not isinstance(result, dict | None):
            raise TypeError(f"node {self.name!r} returned {type(result).__name__}, not a dict")
        return result or {}


def takes_two(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` needs a second positional argument (a node's run context); one with a
    default (``key=check``, bound in a loop) is not asked for."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: the state only
        return False
    needed = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
              and p.default is p.empty]
    return len(needed) >= 2


class RunResult(dict[str, Any]):
    """The final state, plus ``run_id``, ``status``, open ``waits`` and the caller's ``meta``."""

    run_id: str | None = None
    status: RunStatus = "completed"
    already_answered = False  # set by resume when the wait had its answer already

    def __init__(self, state: Mapping[str, Any], meta: Mapping[str, Any] | None = None) -> None:
        super().__init__(state)
        self.meta = dict(meta or {})
        self.waits: list[dict[str, Any]] = []


class Graph:
    """Nodes, plain edges and routers; checked and analysed once, before the first run."""

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self.nodes: dict[str, Node] = {}
        self.edges: dict[str, list[str]] = {}
        self.routers: dict[str, tuple[RouteFn, dict[str, str]]] = {}
        self.reach: dict[str, set[str]] = {}  # node -> what it reaches (empty: not analysed)

    def add_node(self, node: Node) -> None:
        if node.name in self.nodes or node.name in (START, END):
            raise GraphBuildError(f"node name {node.name!r} is already taken")
        self.nodes[node.name] = node
        self.reach = {}

    def add_edge(self, src: str, dst: str) -> None:
        self.edges.setdefault(src, []).append(dst)
        self.reach = {}

    def add_router(self, src: str, route: RouteFn, targets: Mapping[str, str]) -> None:
        if src in self.routers:
            raise GraphBuildError(f"node {src!r} already has a router")
        self.routers[src] = (route, dict(targets))
        self.reach = {}

    def next_nodes(self, name: str, state: GraphState) -> list[Route]:
        """Where a finished node leads: its plain edges, then its router's pick (labelled)."""
        if name not in self.routers:
            return self.plain[name]
        route, targets = self.routers[name]
        if (label := route(state)) not in targets:
            raise GraphRunError(f"router of {name!r} chose {label!r}, not one of "
                                f"{sorted(targets)}")
        return [*self.plain[name], (targets[label], label)]

    def over_limit(self, name: str, visit: int, steps: int, max_steps: int) -> str | None:
        """Why visit ``visit`` of ``name`` may not run once ``steps`` ran in all, else None."""
        if steps >= max_steps:
            return f"max_steps={max_steps} reached before {name!r}"
        if visit > (limit := self.nodes[name].max_visits):
            return f"{name!r} exceeded max_visits={limit}"
        return None

    def compiled(self) -> Graph:
        """Check the graph (a GraphBuildError names the nodes); work out what runs read."""
        if self.reach:
            return self
        known = {START, *self.nodes}
        # Router targets and on_error: the edges that a run takes only sometimes.
        sometimes = {n: [*self.routers[n][1].values()] if n in self.routers else [] for n in known}
        for node in self.nodes.values():
            sometimes[node.name] += [node.on_error] if node.on_error else []
        for src in [*self.edges, *self.routers]:
            if src not in known:
                why = "END has no way out" if src == END else f"{src!r} is not a node"
                raise GraphBuildError(f"edge out of {src!r}: {why}")
        for src in known:
            for dst in [*self.edges.get(src, []), *sometimes[src]]:
                if dst != END and dst not in self.nodes:
                    raise GraphBuildError(f"edge {src!r} -> {dst!r}: {dst!r} is not a node")
        edges = {n: [d for d in [*self.edges.get(n, []), *sometimes[n]] if d != END] for n in known}
        if unreachable := sorted(set(self.nodes) - reach_from(START, edges)):
            raise GraphBuildError(f"START cannot reach node(s) {', '.join(unreachable)}")
        # An edge taken sometimes whose target leads back to its source closes a cycle. Left
        # out, what remains must be acyclic: then some pending node can always run.
        back = {(n, d) for n in known for d in sometimes[n] if n in reach_from(d, edges)}
        forward = {n: [d for d in edges[n] if (n, d) not in back] for n in known}
        reach = {n: reach_from(n, forward) for n in known}
        if cyclic := [n for n in self.nodes if n in reach[n]]:
            raise GraphBuildError(f"cycle of plain edges through {cyclic[0]!r}: a cycle needs "
                                  "a router edge to leave it")
        # The join rule: a triggered node waits while a node that reaches it is active.
        self.ancestors = {x: frozenset(n for n in self.nodes if x in reach[n]) for x in self.nodes}
        self.plain: dict[str, list[Route]] = {n: [(d, None) for d in self.edges.get(n, [])]
                                              for n in known}
        self.reach = reach
        return self


def reach_from(src: str, edges: Mapping[str, list[str]]) -> set[str]:
    """Every node reachable from ``src`` along ``edges`` (node -> its successors)."""
    seen, todo = set[str](), list(edges.get(src, []))
    while todo:
        if (name := todo.pop()) not in seen:
            seen.add(name)
            todo += edges.get(name, [])
    return seen


class RunLog(Protocol):
    """What a runner needs from a durable store (``graphs.runs.RunStore`` is one)."""

    def begin(self, run_id: str, workflow: str, state: RunResult, max_steps: int) -> None: ...
    def append(self, run_id: str, events: list[dict[str, Any]], delta: GraphState | None = None,
               frontier: dict[str, Any] | None = None, taken: str | None = None) -> None: ...

"""The engine's story: who ran, in what order, in parallel or not, which route, what state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from graphs import (
    END,
    START,
    Graph,
    GraphBuildError,
    GraphRunError,
    Node,
    RetryPolicy,
    RunContext,
    run_graph,
)
from graphs.trace import node_statuses

State = dict[str, Any]


def writes(key: str, value: Any = True) -> Callable[[State], Any]:
    async def node(state: State) -> State:
        return {key: value}
    return node


def slow(key: str, seconds: float) -> Callable[[State], Any]:
    async def node(state: State) -> State:
        await asyncio.sleep(seconds)  # simulated work, not waiting for a condition
        return {key: True}
    return node


def chain(*names: str) -> Graph:
    graph = Graph("chain")
    previous = START
    for name in names:
        graph.add_node(Node(name, writes(name)))
        graph.add_edge(previous, name)
        previous = name
    graph.add_edge(previous, END)
    return graph


class Recorder:
    """An observer keeping every event."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def __call__(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def story(self, *kinds: str) -> list[tuple[str, str]]:
        return [(e["event"], e.get("node") or e.get("target") or e.get("status", ""))
                for e in self.events if not kinds or e["event"] in kinds]

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["event"] == kind]


async def test_chain_runs_in_topology_order() -> None:
    rec = Recorder()
    result = await run_graph(chain("a", "b", "c"), {"input": 1}, observer=rec)
    assert rec.story() == [("graph_start", ""), ("node_start", "a"), ("node_end", "a"),
                           ("node_start", "b"), ("node_end", "b"), ("node_start", "c"),
                           ("node_end", "c"), ("graph_end", "completed")]
    assert result == {"input": 1, "a": True, "b": True, "c": True}
    assert result.status == "completed"


class EmptyListObserver(list[dict[str, Any]]):
    """An observer that is falsy until it has seen an event (a list subclass)."""

    def __call__(self, event: dict[str, Any]) -> None:
        self.append(event)


async def test_a_falsy_observer_still_gets_every_event() -> None:
    observer = EmptyListObserver()
    assert not observer
    result = await run_graph(chain("a", "b"), {}, observer=observer)
    assert [e["event"] for e in observer] == ["graph_start", "node_start", "node_end",
                                              "node_start", "node_end", "graph_end"]
    assert {e["run_id"] for e in observer} == {result.run_id}


async def test_events_carry_their_fields() -> None:
    rec = Recorder()
    graph = chain("a")
    graph.add_router("a", lambda s: "done", {"done": END})
    result = await run_graph(graph, {}, observer=rec)
    assert {e["run_id"] for e in rec.events} == {result.run_id}
    assert all(isinstance(e["t"], float) for e in rec.events)
    assert [e["t"] for e in rec.events] == sorted(e["t"] for e in rec.events)
    start, node_start, node_end, route, end = rec.events
    assert start["workflow"] == "chain"
    assert node_start["attempt"] == 1
    assert node_end["wrote"] == ["a"] and node_end["duration_s"] >= 0 and "error" not in node_end
    assert (route["router"], route["target"], route["label"]) == ("a", END, "done")
    assert end["status"] == "completed"


async def test_fan_out_runs_branches_in_parallel_and_join_waits_for_all() -> None:
    graph = Graph()
    for name in ("x", "y", "z"):
        graph.add_node(Node(name, slow(name, 0.2)))
        graph.add_edge(START, name)
        graph.add_edge(name, "join")
    graph.add_node(Node("join", lambda s: {"all": s["x"] and s["y"] and s["z"]}))
    rec = Recorder()
    t0 = time.perf_counter()
    result = await run_graph(graph, {}, observer=rec)
    assert time.perf_counter() - t0 < 0.45  # three 0.2 s branches overlapped
    assert result["all"] is True
    assert rec.story("node_start")[:3] == [("node_start", n) for n in "xyz"]
    assert rec.story()[-3:] == [("node_start", "join"), ("node_end", "join"),
                                ("graph_end", "completed")]


async def test_sync_nodes_run_in_threads_alongside_async_ones() -> None:
    def sync_work(state: State) -> State:
        time.sleep(0.2)  # blocking work: must not block the loop
        return {"sync": True}

    graph = Graph()
    graph.add_node(Node("sync", sync_work))
    graph.add_node(Node("async", slow("async", 0.2)))
    graph.add_node(Node("after", lambda s: {"both": s["sync"] and s["async"]}))
    for name in ("sync", "async"):
        graph.add_edge(START, name)
        graph.add_edge(name, "after")
    t0 = time.perf_counter()
    result = await run_graph(graph, {})
    assert time.perf_counter() - t0 < 0.35
    assert result["both"] is True


async def test_join_waits_for_branches_of_different_lengths() -> None:
    graph = Graph()
    short_done = asyncio.Event()

    async def short(state: State) -> State:
        short_done.set()
        return {"short": True}

    async def long_step(state: State) -> State:
        await short_done.wait()  # the long branch is still going when the short one ends
        return {"long1": True}

    graph.add_node(Node("short", short))
    graph.add_node(Node("long1", long_step))
    graph.add_node(Node("long2", writes("long2")))
    graph.add_node(Node("long3", writes("long3")))
    graph.add_node(Node("join", lambda s: {"seen": sorted(k for k in s if k != "seen")}))
    graph.add_edge(START, "short")
    graph.add_edge(START, "long1")
    graph.add_edge("long1", "long2")
    graph.add_edge("long2", "long3")
    graph.add_edge("short", "join")
    graph.add_edge("long3", "join")
    rec = Recorder()
    result = await run_graph(graph, {}, observer=rec)
    assert result["seen"] == ["long1", "long2", "long3", "short"]
    assert rec.story("node_start").count(("node_start", "join")) == 1
    assert rec.story("node_end")[-1] == ("node_end", "join")


def triage_graph(intent: str = "social") -> Graph:
    graph = Graph("triage")
    graph.add_node(Node("classify", writes("intent", intent)))
    graph.add_node(Node("calendar", slow("calendar", 0.01)))
    graph.add_node(Node("gather", writes("gathered")))
    for target in ("notify", "quick", "agent"):
        graph.add_node(Node(target, writes("reply", target)))
        graph.add_edge(target, "done")
    graph.add_node(Node("done", lambda s: {"done": s["reply"]}))
    graph.add_edge(START, "classify")
    graph.add_edge(START, "calendar")
    graph.add_edge("classify", "gather")
    graph.add_edge("calendar", "gather")
    graph.add_router("gather", lambda s: s["intent"],
                     {"urgent": "notify", "social": "quick", "question": "agent"})
    return graph


@pytest.mark.parametrize(("intent", "target"),
                         [("urgent", "notify"), ("social", "quick"), ("question", "agent")])
async def test_router_picks_the_edge_and_the_join_after_it_runs(intent: str, target: str) -> None:
    rec = Recorder()
    result = await run_graph(triage_graph(intent), {}, observer=rec)
    assert [e["target"] for e in rec.of("route")] == [target]
    ran = {e["node"] for e in rec.of("node_start")}
    assert ran == {"classify", "calendar", "gather", target, "done"}
    assert result["done"] == target and result.status == "completed"


async def test_same_graph_and_input_give_same_state_and_routes() -> None:
    outcomes = []
    for _ in range(5):
        rec = Recorder()
        result = await run_graph(triage_graph("question"), {"text": "hi"}, observer=rec)
        outcomes.append((dict(result), [e["target"] for e in rec.of("route")]))
    assert all(outcome == outcomes[0] for outcome in outcomes)


async def test_parallel_write_of_the_same_key_raises_naming_both_nodes() -> None:
    graph = Graph()
    graph.add_node(Node("left", writes("answer", 1)))
    graph.add_node(Node("right", writes("answer", 2)))
    graph.add_edge(START, "left")
    graph.add_edge(START, "right")
    rec = Recorder()
    with pytest.raises(GraphRunError, match=r"'answer'.*'left'.*'right'") as caught:
        await run_graph(graph, {}, observer=rec)
    assert "answer" in str(caught.value)
    assert rec.events[-1]["event"] == "graph_end" and rec.events[-1]["status"] == "failed"


async def test_collision_between_overlapping_nodes_that_finish_at_different_times() -> None:
    # slow overlaps fast and fast_next; fast ends first. slow writes what fast_next wrote.
    release = asyncio.Event()

    async def slow_node(state: State) -> State:
        await release.wait()
        return {"shared": "slow"}

    async def fast_next(state: State) -> State:
        release.set()
        return {"shared": "fast_next"}

    graph = Graph()
    graph.add_node(Node("slow", slow_node))
    graph.add_node(Node("fast", writes("other")))
    graph.add_node(Node("fast_next", fast_next))
    graph.add_edge(START, "slow")
    graph.add_edge(START, "fast")
    graph.add_edge("fast", "fast_next")
    with pytest.raises(GraphRunError, match=r"'shared'.*'fast_next'.*'slow'"):
        await run_graph(graph, {})


async def test_sequential_nodes_may_overwrite_a_key() -> None:
    graph = Graph()
    graph.add_node(Node("first", writes("value", 1)))
    graph.add_node(Node("second", writes("value", 2)))
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    assert (await run_graph(graph, {}))["value"] == 2


def loop_graph(max_visits: int, until: int) -> Graph:
    graph = Graph("loop")
    graph.add_node(Node("step", lambda s: {"n": s.get("n", 0) + 1}, max_visits=max_visits))
    graph.add_router("step", lambda s: "again" if s["n"] < until else "stop",
                     {"again": "step", "stop": END})
    graph.add_edge(START, "step")
    return graph


async def test_a_cycle_stops_at_max_visits() -> None:
    rec = Recorder()
    result = await run_graph(loop_graph(max_visits=3, until=100), {}, observer=rec)
    assert result["n"] == 3
    assert "max_visits=3" in result["errors"]["step"]
    assert result.status == "failed"
    assert len(rec.of("node_start")) == 3


async def test_a_cycle_ends_by_its_router_within_max_visits() -> None:
    result = await run_graph(loop_graph(max_visits=5, until=4), {})
    assert (result["n"], result.status, "errors" in result) == (4, "completed", False)


async def test_max_steps_is_a_hard_stop_even_with_on_error() -> None:
    graph = loop_graph(max_visits=1000, until=10**6)
    graph.nodes["step"].on_error = "step"
    rec = Recorder()
    result = await run_graph(graph, {}, observer=rec, max_steps=7)
    assert result["n"] == 7 and result.status == "failed"
    assert "max_steps=7" in result["errors"]["step"]
    assert len(rec.of("node_start")) == 7


async def test_an_exception_follows_on_error() -> None:
    async def broken(state: State) -> State:
        raise ValueError("bad input")

    graph = Graph()
    graph.add_node(Node("broken", broken, on_error="apologise"))
    graph.add_node(Node("after", writes("after")))
    graph.add_node(Node("apologise", lambda s: {"reply": "sorry: " + s["errors"]["broken"]}))
    graph.add_edge(START, "broken")
    graph.add_edge("broken", "after")
    rec = Recorder()
    result = await run_graph(graph, {}, observer=rec)
    assert result["reply"] == "sorry: ValueError: bad input"
    assert "after" not in result and result.status == "completed"
    assert rec.of("route")[0]["target"] == "apologise"


async def test_failure_without_on_error_fails_the_run_and_blocks_downstream() -> None:
    async def broken(state: State) -> State:
        raise ValueError("nope")

    graph = chain("a", "b", "c")
    graph.nodes["b"].fn = broken
    graph.nodes["b"].is_async = True
    rec = Recorder()
    result = await run_graph(graph, {}, observer=rec)
    assert result.status == "failed" and result["errors"] == {"b": "ValueError: nope"}
    assert node_statuses(rec.events, ["a", "b", "c"]) == {
        "a": "completed", "b": "failed", "c": "blocked"}


class Flaky:
    """Fails the first ``failures`` calls with ``exc``, then succeeds; records call times."""

    def __init__(self, failures: int, exc: Exception) -> None:
        self.failures, self.exc, self.calls = failures, exc, list[float]()

    async def __call__(self, state: State) -> State:
        self.calls.append(time.perf_counter())
        if len(self.calls) <= self.failures:
            raise self.exc
        return {"ok": len(self.calls)}


def one_node(fn: Any, **options: Any) -> Graph:
    graph = Graph()
    graph.add_node(Node("flaky", fn, **options))
    graph.add_edge(START, "flaky")
    return graph


async def test_transient_failures_are_retried_with_backoff() -> None:
    flaky = Flaky(2, ConnectionError("reset"))
    rec = Recorder()
    policy = RetryPolicy(max_attempts=3, delay=0.05, backoff=2.0)
    result = await run_graph(one_node(flaky, retry=policy), {}, observer=rec)
    assert result["ok"] == 3
    gaps = [b - a for a, b in zip(flaky.calls, flaky.calls[1:], strict=False)]
    assert gaps[0] >= 0.05 and gaps[1] >= 0.1  # the wait doubles
    assert [(e["event"], e["attempt"]) for e in rec.events if e["event"].startswith("node")] == [
        ("node_start", 1), ("node_end", 1), ("node_start", 2), ("node_end", 2),
        ("node_start", 3), ("node_end", 3)]
    assert [e.get("retry_in") for e in rec.of("node_end")] == [0.05, 0.1, None]
    assert node_statuses(rec.events[:3]) == {"flaky": "retrying"}


async def test_rate_limits_and_5xx_are_transient_4xx_is_not() -> None:
    class StatusError(Exception):
        def __init__(self, status_code: int) -> None:
            super().__init__(f"HTTP {status_code}")
            self.status_code = status_code

    fast = RetryPolicy(max_attempts=2, delay=0.001)
    for status, retried in ((429, True), (503, True), (400, False)):
        flaky = Flaky(1, StatusError(status))
        result = await run_graph(one_node(flaky, retry=fast), {})
        assert (len(flaky.calls) == 2) is retried, status
        assert ("ok" in result) is retried


async def test_a_permanent_failure_is_not_retried() -> None:
    flaky = Flaky(1, KeyError("missing"))
    result = await run_graph(one_node(flaky, retry=RetryPolicy(delay=0.001)), {})
    assert len(flaky.calls) == 1
    assert result["errors"]["flaky"].startswith("KeyError") and result.status == "failed"


async def test_a_time_out_is_retried() -> None:
    never = asyncio.Event()
    calls = []

    async def hangs_once(state: State) -> State:
        calls.append(1)
        if len(calls) == 1:
            await never.wait()
        return {"ok": True}

    policy = RetryPolicy(max_attempts=2, delay=0.001)
    result = await run_graph(one_node(hangs_once, timeout=0.05, retry=policy), {})
    assert result["ok"] is True and len(calls) == 2


async def test_a_time_out_without_retry_fails_the_node() -> None:
    never = asyncio.Event()

    async def hangs(state: State) -> State:
        await never.wait()
        return {}

    result = await run_graph(one_node(hangs, timeout=0.05), {})
    assert result["errors"]["flaky"].startswith("TimeoutError") and result.status == "failed"


def checks_cycle() -> Graph:
    """The content workflow's shape: draft, three checks, aggregate, revise loops back."""
    graph = Graph("content")
    graph.add_node(Node("draft", lambda s: {"draft": 1}))
    checks = {"tone": 0.03, "facts": 0.0, "length": 0.01}
    for check, seconds in checks.items():
        async def run_check(state: State, key: str = check, pause: float = seconds) -> State:
            await asyncio.sleep(pause)
            return {key: state["draft"]}
        graph.add_node(Node(check, run_check, max_visits=5))
        graph.add_edge("draft", check)
        graph.add_edge(check, "aggregate")
    graph.add_node(Node("aggregate", lambda s: {"score": min(s[c] for c in checks)},
                        max_visits=5))
    graph.add_router("aggregate", lambda s: "pass" if s["score"] >= 3 else "revise",
                     {"pass": END, "revise": "revise"})
    graph.add_node(Node("revise", lambda s: {"draft": s["draft"] + 1}, max_visits=5))
    for check in checks:
        graph.add_edge("revise", check)
    graph.add_edge(START, "draft")
    return graph


async def test_a_node_in_a_cycle_runs_again_and_the_join_inside_waits_again() -> None:
    rec = Recorder()
    result = await run_graph(checks_cycle(), {}, observer=rec)
    assert result["score"] == 3 and result.status == "completed"
    order = [e["node"] for e in rec.of("node_end")]
    assert order.count("aggregate") == 3 and order.count("revise") == 2
    for i, name in enumerate(order):
        if name == "aggregate":  # each aggregate comes after all three checks of its round
            round_start = max(j for j in range(i) if order[j] in ("draft", "revise"))
            assert sorted(order[round_start + 1:i]) == ["facts", "length", "tone"]


async def test_the_context_observer_tags_events_and_is_none_when_nobody_listens() -> None:
    seen: list[Any] = []

    async def agent(state: State, context: RunContext) -> State:
        observer = context.observer()
        seen.append(observer)
        if observer is not None:
            observer({"event": "model_call", "role": "small", "cost_usd": 0.001})
        return {}

    rec = Recorder()
    result = await run_graph(one_node(agent), {}, observer=rec)
    calls = rec.of("model_call")
    assert calls and calls[0]["node"] == "flaky" and calls[0]["run_id"] == result.run_id
    assert "t" in calls[0] and calls[0]["role"] == "small"
    await run_graph(one_node(agent), {})
    assert seen[1] is None


async def test_a_node_returning_a_non_dict_fails_clearly() -> None:
    result = await run_graph(one_node(lambda s: 42), {})
    assert "returned int" in result["errors"]["flaky"]


async def test_the_caller_state_is_not_mutated() -> None:
    state = {"input": 1}
    await run_graph(chain("a"), state)
    assert state == {"input": 1}


def build(*wiring: tuple[str, str], nodes: tuple[str, ...] = ("a", "b")) -> Graph:
    graph = Graph()
    for name in nodes:
        graph.add_node(Node(name, writes(name)))
    for src, dst in wiring:
        graph.add_edge(src, dst)
    return graph


@pytest.mark.parametrize(("graph_factory", "message"), [
    (lambda: build((START, "a"), ("a", "ghost"), nodes=("a",)), r"'a' -> 'ghost'"),
    (lambda: build((START, "a"), ("ghost", "a"), nodes=("a",)), r"'ghost' is not a node"),
    (lambda: build((START, "a"), (END, "a"), nodes=("a",)), r"END"),
    (lambda: build((START, "a")), r"START cannot reach node\(s\) b"),
    (lambda: build((START, "a"), ("a", "b"), ("b", "a")), r"cycle of plain edges"),
])
async def test_build_errors_name_the_nodes(graph_factory: Callable[[], Graph],
                                           message: str) -> None:
    with pytest.raises(GraphBuildError, match=message):
        await run_graph(graph_factory(), {})


async def test_unknown_router_target_and_duplicate_node_are_refused() -> None:
    graph = build((START, "a"), nodes=("a",))
    graph.add_router("a", lambda s: "x", {"x": "nowhere"})
    with pytest.raises(GraphBuildError, match="'nowhere'"):
        graph.compiled()
    with pytest.raises(GraphBuildError, match="already taken"):
        graph.add_node(Node("a", writes("a")))


async def test_router_returning_an_unknown_label_is_a_node_error() -> None:
    graph = build((START, "a"), nodes=("a",))
    graph.add_router("a", lambda s: "maybe", {"yes": END})
    result = await run_graph(graph, {})
    assert "'maybe'" in result["errors"]["a"] and result.status == "failed"


async def test_a_failure_blocks_only_its_dependents_and_independent_nodes_finish() -> None:
    release = asyncio.Event()

    async def broken(state: State) -> State:
        release.set()  # the independent branch is still busy when this fails
        raise ValueError("nope")

    async def slow(state: State) -> State:
        await release.wait()
        return {"slow": True}

    graph = Graph("split")
    for node in (Node("broken", broken), Node("after_broken", writes("after_broken")),
                 Node("slow", slow), Node("after_slow", writes("after_slow"))):
        graph.add_node(node)
    graph.add_edge(START, "broken")
    graph.add_edge(START, "slow")
    graph.add_edge("broken", "after_broken")
    graph.add_edge("slow", "after_slow")
    rec = Recorder()
    result = await run_graph(graph, {}, observer=rec)
    assert result.status == "failed" and result["errors"] == {"broken": "ValueError: nope"}
    assert result["slow"] is True and result["after_slow"] is True  # independent: finished
    assert "after_broken" not in result
    assert rec.of("graph_end")[0]["blocked"] == ["after_broken"]
    assert node_statuses(rec.events, graph.nodes) == {
        "broken": "failed", "after_broken": "blocked", "slow": "completed",
        "after_slow": "completed"}

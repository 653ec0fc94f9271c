"""Bench the engine's per-run overhead against LangGraph ``ainvoke`` on the same graph shapes.

Usage: ``.venv/bin/python bench/engine.py`` (needs the ``bench`` extra). Every node is a
zero-work async function; no observer, no store. Prints µs per run for both engines and the
ratio (LangGraph / ours; the target is ≥ 30 on chain-3, fan-out-5 and triage), then wall time
over critical path for three 50 ms branches (target ≤ 1.03).
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import itertools

from langgraph.graph import END as LG_END
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph

from graphs import END, START, Graph, Node, run_graph

# A shape: (nodes, plain edges, joins (sources, target), router (source, {label: target}))
Shape = tuple[list[str], list[tuple[str, str]], list[tuple[list[str], str]],
              tuple[str, dict[str, str]] | None]


def chain(n: int) -> Shape:
    names = [f"n{i}" for i in range(n)]
    edges = [(START, names[0]), *itertools.pairwise(names), (names[-1], END)]
    return names, edges, [], None


def fan_out(n: int) -> Shape:
    branches = [f"b{i}" for i in range(n)]
    edges = [("root", b) for b in branches] + [(START, "root"), ("join", END)]
    return ["root", *branches, "join"], edges, [(branches, "join")], None


def triage() -> Shape:
    names = ["classify_intent", "check_calendar", "gather", "notify_now", "quick_reply",
             "full_agent"]
    edges = [(START, "classify_intent"), (START, "check_calendar"), ("notify_now", END),
             ("quick_reply", END), ("full_agent", END)]
    targets = {"urgent": "notify_now", "social": "quick_reply", "question": "full_agent"}
    return names, edges, [(["classify_intent", "check_calendar"], "gather")], ("gather", targets)


def writer(key: str, delay: float = 0.0) -> Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]:
    async def node(state: dict[str, Any]) -> dict[str, Any]:
        if delay:
            await asyncio.sleep(delay)
        return {key: 1}
    return node


def pick(state: dict[str, Any]) -> str:
    return "social"


def ours(shape: Shape, delay: float = 0.0) -> Graph:
    names, edges, joins, router = shape
    graph = Graph("bench")
    for name in names:
        graph.add_node(Node(name, writer(name, delay if name.startswith("b") else 0.0)))
    for src, dst in edges:
        graph.add_edge(src, dst)
    for sources, dst in joins:
        for src in sources:
            graph.add_edge(src, dst)
    if router:
        graph.add_router(router[0], pick, router[1])
    return graph


def langgraph(shape: Shape, delay: float = 0.0) -> Any:
    names, edges, joins, router = shape
    state_type = TypedDict("State", {name: int for name in names}, total=False)  # type: ignore
    builder: Any = StateGraph(state_type)
    for name in names:
        builder.add_node(name, writer(name, delay if name.startswith("b") else 0.0))
    for src, dst in edges:
        builder.add_edge({START: LG_START, END: LG_END}.get(src, src),
                         {START: LG_START, END: LG_END}.get(dst, dst))
    for sources, dst in joins:
        builder.add_edge(sources, dst)
    if router:
        builder.add_conditional_edges(router[0], pick, router[1])
    return builder.compile()


async def per_run(runners: list[Callable[[], Awaitable[Any]]], runs: int) -> list[float]:
    """µs per run for each runner: batches interleaved (the machine is noisy), median of 7."""
    batches: list[list[float]] = [[] for _ in runners]
    for run in runners:
        for _ in range(max(5, runs // 5)):
            await run()
    for _ in range(7):
        for run, times in zip(runners, batches, strict=True):
            t0 = time.perf_counter()
            for _ in range(runs):
                await run()
            times.append((time.perf_counter() - t0) / runs * 1e6)
    return [statistics.median(times) for times in batches]


async def main() -> None:
    shapes = {"chain-3": (chain(3), 100), "fan-out-5 + join": (fan_out(5), 100),
              "triage": (triage(), 100), "chain-100": (chain(100), 5),
              "fan-out-100": (fan_out(100), 5)}
    print(f"{'shape':18} {'ours µs':>10} {'langgraph µs':>13} {'ratio':>7}")
    for label, (shape, runs) in shapes.items():
        mine, theirs = ours(shape), langgraph(shape)

        def run_ours(graph: Graph = mine) -> Awaitable[Any]:
            return run_graph(graph, {}, max_steps=1000)

        def run_langgraph(graph: Any = theirs) -> Awaitable[Any]:
            return graph.ainvoke({}, {"recursion_limit": 1000})  # type: ignore[no-any-return]

        t_ours, t_lg = await per_run([run_ours, run_langgraph], runs)
        print(f"{label:18} {t_ours:10.1f} {t_lg:13.1f} {t_lg / t_ours:6.1f}x")
    shape = fan_out(3)
    mine, theirs = ours(shape, 0.05), langgraph(shape, 0.05)
    runners: dict[str, Callable[[], Awaitable[Any]]] = {
        "ours": lambda: run_graph(mine, {}), "langgraph": lambda: theirs.ainvoke({})}
    for label, run in runners.items():
        walls = []
        for _ in range(10):
            t0 = time.perf_counter()
            await run()
            walls.append(time.perf_counter() - t0)
        print(f"three 50 ms branches, {label}: wall / critical path = "
              f"{statistics.median(walls) / 0.05:.3f}")


if __name__ == "__main__":
    asyncio.run(main())

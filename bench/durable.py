"""Bench a durable step: recording a node's writes, here vs LangGraph's SQLite checkpointer.

Usage: ``.venv/bin/python bench/durable.py`` (needs the ``bench`` extra). The same graph, a
chain of 100 nodes each writing a new 1 KB value, runs with and without durability on both
engines, in this process, on SQLite files in a temporary directory. Prints the cost per step
(with store minus without, per node) for both, the median time of our store's appends per
step, the ratio, and each database's size after the run (target: ≤ 100 µs per step median,
≥ 10× below LangGraph, storage linear in bytes written). On a busy machine the run medians
include the scheduler's preemptions and WAL checkpoints (an fsync), so the cost measured on
the fastest runs is printed too.
"""

from __future__ import annotations

import asyncio
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TypedDict

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END as LG_END
from langgraph.graph import START as LG_START
from langgraph.graph import StateGraph

from graphs import END, START, Graph, GraphState, Node, RunResult, run_graph
from graphs.checkpoints import NodeSteps
from graphs.runs import RunStore

STEPS, KB = 100, "x" * 1024


def kilobyte(key: str) -> Any:
    async def node(state: GraphState) -> GraphState:
        return {key: KB}
    return node


def ours() -> Graph:
    graph = Graph("kilobytes")
    previous = START
    for i in range(STEPS):
        graph.add_node(Node(f"n{i}", kilobyte(f"k{i}")))
        graph.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    graph.add_edge(previous, END)
    return graph


def langgraph(checkpointer: Any) -> Any:
    state_type = TypedDict("State", {f"k{i}": str for i in range(STEPS)}, total=False)  # type: ignore
    builder: Any = StateGraph(state_type)
    previous = LG_START
    for i in range(STEPS):
        builder.add_node(f"n{i}", lambda state, key=f"k{i}": {key: KB})
        builder.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    builder.add_edge(previous, LG_END)
    return builder.compile(checkpointer=checkpointer)


class TimedStore(RunStore):
    """Our store, timing each append (one per node boundary)."""

    appends: list[float]

    def append(self, *args: Any, **kwargs: Any) -> None:
        t0 = time.perf_counter()
        super().append(*args, **kwargs)
        self.appends.append(time.perf_counter() - t0)


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))


async def bench_ours(folder: Path, runs: int) -> tuple[float, float, float, int]:
    graph, path = ours(), folder / "ours.db"
    store = TimedStore.open(path)
    store.appends = []
    plain, durable, first_size = [], [], 0
    for i in range(runs):
        t0 = time.perf_counter()
        await run_graph(graph, {}, max_steps=STEPS)
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        await run_graph(graph, {}, store=store, max_steps=STEPS)
        durable.append(time.perf_counter() - t0)
        if i == 0:
            store.db.close()  # closing checkpoints the WAL: the file holds one run
            first_size = size(path)
            store = TimedStore.open(path)
            store.appends = []
    store.db.close()
    per_step = store.appends  # one append per node boundary (+ one at start, one at end)
    step_cost = (statistics.median(durable) - statistics.median(plain)) / STEPS
    quiet_cost = (min(durable) - min(plain)) / STEPS  # the fastest runs: the least preempted
    return step_cost, quiet_cost, statistics.median(per_step), first_size


def bench_inner_steps(folder: Path, count: int = 500) -> tuple[float, float]:
    """Median cost of a step inside a node: a model turn (one write), a tool call (begin and
    done: two writes), each with a ~1 KB record, as the agent loop makes them."""
    store = RunStore.open(folder / "inner.db")
    store.begin("inner", "inner", RunResult({}), 1)
    steps = NodeSteps(store, "inner", "agent", 1)
    reply = {"text": KB, "tool_calls": [["c1", "remember", {"text": "milk"}]]}
    turns, tools = [], []
    for i in range(count):
        t0 = time.perf_counter()
        steps.save(f"turn:{i}", "model_turn", reply)
        turns.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        steps.begin(f"tool:{i}:c1", "tool_call")
        steps.done(f"tool:{i}:c1", {"text": KB, "ok": True})
        tools.append(time.perf_counter() - t0)
    store.db.close()
    return statistics.median(turns), statistics.median(tools)


def bench_langgraph(folder: Path, runs: int) -> tuple[float, int]:
    path = folder / "langgraph.db"
    conn = sqlite3.connect(str(path), check_same_thread=False)
    saver = SqliteSaver(conn)
    with_saver, without = langgraph(saver), langgraph(None)
    plain, durable, first_size = [], [], 0
    for i in range(runs):
        t0 = time.perf_counter()
        without.invoke({}, {"recursion_limit": STEPS + 10})
        plain.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        with_saver.invoke({}, {"recursion_limit": STEPS + 10,
                               "configurable": {"thread_id": f"t{i}"}})
        durable.append(time.perf_counter() - t0)
        if i == 0:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            first_size = size(path)
    conn.close()
    return (statistics.median(durable) - statistics.median(plain)) / STEPS, first_size


async def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        step, quiet_step, appends, our_size = await bench_ours(folder, runs=15)
        lg_step, lg_size = bench_langgraph(folder, runs=5)
        turn, tool = bench_inner_steps(folder)
    print(f"durable step, ours:      {step * 1e6:8.1f} µs per node (run with store - without)")
    print(f"  the same, fastest runs: {quiet_step * 1e6:8.1f} µs per node (min with - min without)")
    print(f"  store appends per step: {appends * 1e6:8.1f} µs median")
    print(f"step inside a node:      {turn * 1e6:8.1f} µs median per model turn, "
          f"{tool * 1e6:.1f} µs per tool call (begin + done)")
    print(f"durable step, langgraph: {lg_step * 1e6:8.1f} µs per node (SqliteSaver)")
    print(f"ratio langgraph / ours:  {lg_step / step:8.1f}x")
    print(f"database after {STEPS} steps of 1 KB: ours {our_size / 1024:.0f} KB, "
          f"langgraph {lg_size / 1024:.0f} KB ({lg_size / our_size:.1f}x)")


if __name__ == "__main__":
    asyncio.run(main())

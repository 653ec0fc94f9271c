"""A process the durability tests start, kill with SIGKILL, and start again.

Usage: ``python crash_worker.py DB DIR MODE [ANSWER]``. The workflow is
``a -> b -> approval (human) -> c``; every node appends its name to ``DIR/ran.log`` (fsynced), so
the tests can count how often each one really ran across processes. MODE:

- ``between``: start a run; after a's boundary is recorded, say ``DIR/ready`` and hang;
- ``inside``: start a run; b says ``DIR/ready`` and hangs mid-node;
- ``waiting``: start a run until it waits on the approval, say ``DIR/ready`` and hang;
- ``start``: start a run, print the result as JSON and exit;
- ``recover``: continue every run left running, print the results as JSON;
- ``resume``: answer the open wait with ANSWER, print the result as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from graphs import END, START, Graph, GraphState, Node, RunResult
from graphs.nodes import human_node, route_on
from graphs.runs import Runs, RunStore
from tests.support.crashing import log_ran, say_ready


def hang() -> None:
    """Block until killed (this process exists to be killed here)."""
    threading.Event().wait()


def build(folder: Path, mode: str) -> Graph:
    def node(name: str) -> Any:
        async def step(state: GraphState) -> GraphState:
            log_ran(folder, name)
            if name == "b" and mode == "inside":
                say_ready(folder)
                await asyncio.Event().wait()  # in flight when the process dies
            return {name: f"{name} done", "trail": [*state.get("trail", []), name]}
        return step

    graph = Graph("crashy")
    for name in ("a", "b", "c"):
        graph.add_node(Node(name, node(name)))
    graph.add_node(human_node(lambda s: f"Go on after {s['trail']}?", "decision",
                              ["yes", "no"], name="approval"))
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", "approval")
    graph.add_router("approval", route_on("decision"), {"yes": "c", "no": END})
    return graph


class HangAfterA(RunStore):
    """A store that hangs right after node a's boundary is safely recorded."""

    folder: Path

    def append(self, run_id: str, events: list[dict[str, Any]], delta: GraphState | None = None,
               frontier: dict[str, Any] | None = None, taken: str | None = None) -> None:
        super().append(run_id, events, delta, frontier, taken)
        if any(e["event"] == "node_end" and e.get("node") == "a" for e in events):
            say_ready(self.folder)
            hang()


def dump(result: RunResult) -> dict[str, Any]:
    return {"state": dict(result), "status": result.status, "run_id": result.run_id,
            "already_answered": result.already_answered}


async def main(db: str, folder: Path, mode: str, answer: str | None) -> None:
    store = HangAfterA.open(db) if mode == "between" else RunStore.open(db)
    store.folder = folder  # type: ignore[attr-defined]
    runs = Runs(store)
    runs.register(build(folder, mode))
    if mode in ("between", "inside", "waiting", "start"):
        result = await runs.start("crashy", {"input": 1}, meta={"chat": "console:chat:1"})
        if mode == "waiting":
            say_ready(folder)
            hang()
        print(json.dumps(dump(result)))
    elif mode == "recover":
        print(json.dumps([dump(r) for r in await runs.recover()]))
    elif mode == "resume":
        run_id = store.runs(limit=1)[0].id
        print(json.dumps(dump(await runs.resume(run_id, answer, by=f"pid:{os.getpid()}"))))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3],
                     sys.argv[4] if len(sys.argv) > 4 else None))

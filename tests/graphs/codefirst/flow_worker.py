"""A process the crash tests start, kill with SIGKILL, and start again.

Usage: ``python flow_worker.py DB DIR MODE [ANSWER]``. The workflow runs a pipeline of four
items through ``fetch`` and ``shape`` (one item at a time), then asks the owner. Every cell
appends ``item:stage`` to ``DIR/ran.log`` (fsynced), so the tests count how often each cell
really ran across processes. MODE:

- ``cell``: start a run; the ``shape`` cell of item ``c`` says ``DIR/ready`` and hangs;
- ``ask``: start a run until it waits on the question, say ``DIR/ready`` and hang;
- ``recover``: continue every run left running, print the results as JSON;
- ``resume``: answer the open question with ANSWER, print the result as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from graphs.codefirst import Workflow, ask, pipeline, workflow
from graphs.graph import RunResult
from graphs.runs import Runs, RunStore
from tests.support.crashing import log_ran, say_ready

ITEMS = ["a", "b", "c", "d"]


@dataclass
class Shaped:
    item: str
    size: int


def build(folder: Path, mode: str) -> Workflow:
    async def fetch(item: str) -> str:
        log_ran(folder, f"{item}:fetch")
        return item * 2

    async def shape(text: str) -> Shaped:
        log_ran(folder, f"{text[0]}:shape")
        if mode == "cell" and text[0] == "c":
            say_ready(folder)
            threading.Event().wait()  # in flight when the process dies
        return Shaped(text, len(text))

    @workflow(name="crashy_flow")
    async def crashy_flow(items: list[str]) -> dict[str, Any]:
        shaped = await pipeline(items, fetch, shape, limit=1, name="cells")
        assert all(isinstance(s, Shaped) for s in shaped)
        decision = await ask("Keep them?", key="keep", input=[s.item for s in shaped],
                             returns=list[str])
        return {"kept": decision.value if decision.approved else [], "by": decision.by}

    return crashy_flow


def dump(result: RunResult) -> dict[str, Any]:
    return {"state": dict(result), "status": result.status, "run_id": result.run_id,
            "waits": result.waits}


async def main(db: str, folder: Path, mode: str, answer: str | None) -> None:
    store = RunStore.open(db)
    runs = Runs(store)
    flow = runs.register(build(folder, mode))
    if mode in ("cell", "ask"):
        result = await runs.start(flow, {"items": ITEMS}, meta={"chat": "console:chat:1"})
        if mode == "ask":
            say_ready(folder)
            threading.Event().wait()
        print(json.dumps(dump(result)))
    elif mode == "recover":
        print(json.dumps([dump(r) for r in await runs.recover()]))
    elif mode == "resume":
        run_id = store.runs(limit=1)[0].id
        print(json.dumps(dump(await runs.resume(run_id, answer, by=f"pid:{os.getpid()}"))))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3],
                     sys.argv[4] if len(sys.argv) > 4 else None))

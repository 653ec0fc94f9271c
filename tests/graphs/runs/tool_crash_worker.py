"""A worker for the tool-call crash tests: the agent loop in a durable node, killed mid-node.

Usage: ``python tool_crash_worker.py DB FOLDER MODE``. The run is one ``agent`` node: the real
``bot.tools.loop.run_loop`` over a fake model (a ``remember`` call, then an answer) and the real
``remember`` tool on a real ``Memory``. Modes:

- ``after_tool``: hang (for the SIGKILL) once the tool call's step is recorded done;
- ``in_flight``: hang right after the note is saved, before its step is recorded done;
- ``recover``: continue what was left running; print the result and the notes as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from bot.models.base import as_messages
from bot.tools.builtin import build_tools
from bot.tools.loop import run_loop
from bot.tools.registry import Caller
from graphs import END, START, Graph, Node, agent_node
from graphs.runs import Runs, RunStore
from memory.notes import Memory
from memory.schema import MIGRATIONS
from sqlitedb.database import Database
from tests.fakes.model import FakeModel
from tests.support.crashing import log_ran, say_ready

OWNER = Caller("owner", True, "console", "1")


class DecidingModel(FakeModel):
    """Decides like a model would, from the conversation: save the note, then say so."""

    async def complete(self, messages: Any, **options: Any) -> Any:
        if as_messages(messages)[-1].role == "tool":
            self.enqueue(text="Saved it.")
        else:
            self.enqueue(tool_calls=[("remember", {"text": "the boiler code is 1234"})])
        return await super().complete(messages, **options)


def hang() -> None:
    threading.Event().wait()  # blocks the event loop: the SIGKILL finds the process here


async def main(db: str, folder: Path, mode: str) -> None:
    memory = Memory(Database(db, migrations=MIGRATIONS))
    model = DecidingModel(role="big")
    original_add = memory.add

    def add(scope: str, text: str, effect_key: str = "") -> int:
        log_ran(folder, "remember")
        note_id = original_add(scope, text, effect_key)
        if mode == "in_flight":
            say_ready(folder)
            hang()
        return note_id

    memory.add = add  # type: ignore[method-assign]
    store = RunStore.open(db)
    if mode == "after_tool":
        original_finish = store.finish_step

        def finish_step(run_id: str, key: str, output_json: str) -> None:
            original_finish(run_id, key, output_json)
            say_ready(folder)
            hang()

        store.finish_step = finish_step  # type: ignore[method-assign]

    async def notify(caller: Caller, text: str) -> str:
        return "noted"

    graph = Graph("remembering")
    graph.add_node(Node("agent", agent_node(run_loop, model, build_tools(memory, None, notify),
                                            caller=lambda state: OWNER,
                                            prompt=lambda state: state["text"],
                                            output_key="reply")))
    graph.add_edge(START, "agent")
    graph.add_edge("agent", END)
    runs = Runs(store)
    runs.register(graph)
    if mode == "recover":
        results = await runs.recover()
        notes = [hit.text for hit in memory.recent("owner")]
        out: dict[str, Any] = {"results": [{"status": r.status, "reply": r.get("reply")}
                                           for r in results],
                               "notes": notes, "model_calls": len(model.history)}
        print(json.dumps(out))
        return
    await runs.start("remembering", {"text": "remember the boiler code is 1234"})


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))

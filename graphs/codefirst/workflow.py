"""``@workflow``: a code workflow, the run layer's ``Workflow`` protocol for plain async Python.

``start`` runs the function with the input as keyword arguments; ``proceed`` (after an answer,
an expiry, a crash or a chosen re-run: ``graphs.runs.Runs`` decides) runs it again from the top
with the stored input, where completed calls return their saved outputs. The run ends as the
engine's do: a ``graph_end`` event with the status, what the function returned as the last
delta (a dict as it is, anything else under ``result``), the waits in the frontier.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from graphs.codefirst.codec import to_json
from graphs.codefirst.runtime import AgentKit, FlowRun
from graphs.events import describe, new_run_id
from graphs.graph import Graph, Observer, RunResult, Suspend, TextSink
from graphs.runs.protocol import Runtime
from graphs.runs.records import RunRecord
from graphs.runs.store import RunStore

log = logging.getLogger(__name__)


class Workflow:
    """A workflow function with its name and agent services (the run layer's protocol)."""

    graph: Graph | None = None  # no fixed shape: drawn from a run (``flow_mermaid``)
    runtime: Runtime = "code"

    def __init__(self, name: str, fn: Callable[..., Awaitable[Any]], agents: AgentKit) -> None:
        self.name = name
        self.fn = fn
        self.agents = agents
        self.__doc__ = fn.__doc__

    def using(self, agents: AgentKit) -> Workflow:
        """The same workflow with these models and loop (wired at start, e.g. in tests)."""
        return Workflow(self.name, self.fn, agents)

    async def start(self, store: RunStore, input: Mapping[str, Any] | None = None, *,
                    run_id: str | None = None, meta: Mapping[str, Any] | None = None,
                    observer: Observer | None = None,
                    live: TextSink | None = None) -> RunResult:
        """Run the function with ``input`` as keyword arguments; returns like ``run_graph``
        (``live`` is not used: no call of a code workflow streams the run's answer)."""
        result = RunResult(dict(input or {}), meta)
        result.run_id = run_id or new_run_id()
        return await self._execute(store, result, observer, set(), resumed=False)

    async def proceed(self, store: RunStore, record: RunRecord,
                      observer: Observer | None = None,
                      live: TextSink | None = None) -> RunResult:
        """Run the function again from the top: finished calls return their saved output."""
        result = RunResult(record.input, record.meta)
        result.run_id = record.run_id
        return await self._execute(store, result, observer, set(record.reruns), resumed=True)

    async def _execute(self, store: RunStore, result: RunResult, observer: Observer | None,
                       reruns: set[str], resumed: bool) -> RunResult:
        assert result.run_id is not None
        run = FlowRun(store, result.run_id, self.agents, observer, reruns, result.meta)
        run.events.begin(self.name, None if resumed else result, 0, code=True)
        run.events.record()
        try:
            with run.bound():
                value = await self.fn(**dict(result))
        except Suspend:
            return self._end(run, result, "waiting")
        except Exception as exc:
            error = describe(exc)
            log.warning("workflow %s run %s failed: %s", self.name, result.run_id, error)
            result["error"] = error
            return self._end(run, result, "failed", {"error": error}, error=error)
        data = to_json(value)
        writes = data if isinstance(data, dict) else {"result": data}
        result.update(writes)
        return self._end(run, result, "completed", writes)

    @staticmethod
    def _end(run: FlowRun, result: RunResult, status: str,
             writes: dict[str, Any] | None = None, **fields: Any) -> RunResult:
        """Record the end of this execution: the status, the last writes, what it waits on."""
        if status != "waiting":
            run.waiting.clear()
        run.events.end(status, writes or {}, run.frontier(), **fields)
        result.status = "waiting" if status == "waiting" else \
            "failed" if status == "failed" else "completed"
        result.waits = list(run.waiting.values())
        return result


def workflow(*, name: str, agents: AgentKit | None = None
             ) -> Callable[[Callable[..., Awaitable[Any]]], Workflow]:
    """Decorate an async function as a durable workflow called ``name``."""
    def wrap(fn: Callable[..., Awaitable[Any]]) -> Workflow:
        return Workflow(name, fn, agents or AgentKit())
    return wrap

"""The one workflow protocol both runtimes implement, and the registry of workflows by name.

A workflow has a ``name``, its ``runtime``, maybe a ``graph`` to draw, and two ways to run:
``start`` a new run and ``proceed`` from a stored ``RunRecord`` (after an answer, an expiry, a
crash). Both runtimes record through the same calls (``graphs.events.RunEvents``: begin, a
record per boundary, park, end) and the same step log (``graphs.checkpoints``), so a run of
either is resumed, recovered, expired, cancelled, listed and traced alike:

- ``"graph"``: a ``graphs.graph.Graph``, through ``GraphWorkflow``; it proceeds from the
  recorded frontier (``continue_graph``).
- ``"code"``: a ``graphs.codefirst.Workflow`` (``@workflow``), one already; it proceeds by
  running its function again, its finished calls replayed from the step log, so its steps can
  also be chosen to run again (``Runs.rerun``).

``graphs.runs.durable`` holds the rules of when to continue a run and calls through this
protocol only.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal, Protocol, runtime_checkable

from graphs.engine import continue_graph, run_graph
from graphs.graph import Graph, Observer, RunResult, TextSink
from graphs.runs.records import RunRecord
from graphs.runs.store import RunStore

Runtime = Literal["graph", "code"]


@runtime_checkable
class Workflow(Protocol):
    """What the durable layer needs of a workflow, whichever runtime runs it."""

    @property
    def name(self) -> str: ...

    @property
    def runtime(self) -> Runtime: ...

    @property
    def graph(self) -> Graph | None: ...  # its shape to draw, when it has a fixed one

    async def start(self, store: RunStore, input: Mapping[str, Any] | None = None, *,
                    run_id: str | None = None, meta: Mapping[str, Any] | None = None,
                    observer: Observer | None = None,
                    live: TextSink | None = None) -> RunResult: ...

    async def proceed(self, store: RunStore, record: RunRecord,
                      observer: Observer | None = None,
                      live: TextSink | None = None) -> RunResult: ...


class GraphWorkflow:
    """A graph as a workflow: ``run_graph`` to start, ``continue_graph`` to proceed."""

    runtime: Runtime = "graph"

    def __init__(self, graph: Graph, max_steps: int = 25) -> None:
        self.graph: Graph | None = graph.compiled()
        self.shape, self.max_steps = graph, max_steps

    @property
    def name(self) -> str:
        return self.shape.name

    async def start(self, store: RunStore, input: Mapping[str, Any] | None = None, *,
                    run_id: str | None = None, meta: Mapping[str, Any] | None = None,
                    observer: Observer | None = None,
                    live: TextSink | None = None) -> RunResult:
        return await run_graph(self.shape, dict(input or {}), observer, self.max_steps, store,
                               run_id, meta, live)

    async def proceed(self, store: RunStore, record: RunRecord,
                      observer: Observer | None = None,
                      live: TextSink | None = None) -> RunResult:
        state = result_of(record)
        return await continue_graph(
            self.shape, state, store, ready=record.ready,
            waiting={node: wait.as_wait() for node, wait in record.waiting.items()},
            visits=record.visits,
            answers={node: (wait.key, wait.outcome()) for node, wait in record.answers.items()},
            max_steps=record.max_steps, observer=observer, live=live)


def result_of(record: RunRecord) -> RunResult:
    """The run as it stands: its state, status and the waits still open."""
    result = RunResult(record.state, record.meta)
    result.run_id, result.status = record.run_id, record.status
    result.waits = [wait.as_wait() for node, wait in record.waiting.items()
                    if node not in record.answers and wait.status == "open"]
    return result


class Registry:
    """The workflows of this process by name: what resume and recovery can continue."""

    def __init__(self) -> None:
        self._workflows: dict[str, Workflow] = {}

    def add(self, workflow: Workflow | Graph) -> Workflow:
        """Register a workflow (a graph is wrapped); a later one of the same name replaces it."""
        found = GraphWorkflow(workflow) if isinstance(workflow, Graph) else workflow
        self._workflows[found.name] = found
        return found

    def get(self, name: str) -> Workflow | None:
        return self._workflows.get(name)

    def __contains__(self, name: object) -> bool:
        return name in self._workflows

    def __iter__(self) -> Iterator[Workflow]:
        return iter(self._workflows.values())

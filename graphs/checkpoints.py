"""Durable steps inside a node: each model turn and tool call recorded as it completes.

A node that does several things with effects (the agent loop: model turns, tool calls) asks
``node_steps()`` for its visit's step log. ``saved(key)`` gives what a step recorded before a
crash, so a continued run replays it instead of doing it again; ``begin`` marks a step with an
effect as started (found still started after a crash, it was in flight: the effect must be
keyed by ``effect_key(key)`` so that doing it again is not doing it twice); ``done`` records
its output. Steps live in the run store's ``run_steps`` rows, under ``<node>:<visit>/<key>``.
Outside a durable run ``node_steps()`` is None and the node just does its work.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from graphs.events import node_scope


class SavedStep(Protocol):
    """What a store gives back for a recorded step."""

    @property
    def status(self) -> str: ...
    @property
    def output(self) -> Any: ...


@runtime_checkable
class StepStore(Protocol):
    """The part of the run store the step log uses (``graphs.runs.RunStore``)."""

    def step(self, run_id: str, key: str) -> SavedStep | None: ...
    def start_step(self, run_id: str, key: str, kind: str, fingerprint: str,
                   parts: dict[str, str], cell: tuple[str, str, str] | None = None,
                   status: str = "running", group: str | None = None) -> None: ...
    def finish_step(self, run_id: str, key: str, output_json: str) -> None: ...
    def save_step(self, run_id: str, key: str, kind: str, output_json: str) -> None: ...


class NodeSteps:
    """The recorded steps of one visit of one node of one run."""

    def __init__(self, store: StepStore, run_id: str, node: str, visit: int) -> None:
        self.store, self.run_id, self.prefix = store, run_id, f"{node}:{visit}/"

    def saved(self, key: str) -> SavedStep | None:
        """The step as recorded (status ``running`` = it was in flight at a crash), or None."""
        return self.store.step(self.run_id, self.prefix + key)

    def begin(self, key: str, kind: str) -> None:
        """A step with an effect starts: recorded before the effect happens."""
        self.store.start_step(self.run_id, self.prefix + key, kind, "", {})

    def done(self, key: str, output: Any) -> None:
        """A begun step finished with ``output`` (plain JSON)."""
        self.store.finish_step(self.run_id, self.prefix + key,
                               json.dumps(output, ensure_ascii=False))

    def save(self, key: str, kind: str, output: Any) -> None:
        """A step without an effect of its own (a model turn), recorded once it is done."""
        self.store.save_step(self.run_id, self.prefix + key, kind,
                             json.dumps(output, ensure_ascii=False))

    def effect_key(self, key: str) -> str:
        """The key a step's effect is done under: the same after any crash and replay."""
        return f"{self.run_id}/{self.prefix}{key}"


def node_steps() -> NodeSteps | None:
    """Inside a node of a durable run: its visit's step log; else None."""
    scope = node_scope.get(None)
    if scope is None or not isinstance(store := scope[0].store, StepStore):
        return None
    events, node, _, visit = scope
    return NodeSteps(store, events.run_id, node, visit)

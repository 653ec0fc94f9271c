"""The one step log of a run: each step recorded as it completes, with its fingerprint.

Two kinds of owner record steps, in the run store's ``run_steps`` rows, the same way: a node
that does several things with effects (the agent loop: model turns, tool calls) asks
``node_steps(context)`` for its visit's log, keyed under ``<node>:<visit>/``; a code
workflow's calls (``graphs.codefirst``) use one log for the whole run. ``replay(key, parts)``
says whether a step is done and still matches what it would do now (its fingerprint: a short
hash per part, so a mismatch names the parts that changed); ``saved(key)`` gives the row as
it is. ``begin`` marks a step with an effect as started (found still started after a crash, it
was in flight: the effect must be keyed by ``effect_key(key)`` so that doing it again is not
doing it twice); ``done`` records its output; ``save`` records a step done at once. Outside a
durable run ``node_steps`` is None and the node just does its work.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol, runtime_checkable

from graphs.events import NO_ANSWER, RunContext

_canonical = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode


def canonical_json(value: Any) -> str:
    """One JSON text per plain JSON value: sorted keys, no spaces (what hashes compare)."""
    return str(_canonical(value))


def short_hash(text: str, size: int = 16) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:size]


class Fingerprint(NamedTuple):
    """A step's fingerprint and the hash of each of its parts (to name what changed)."""

    value: str
    parts: dict[str, str]


NO_FINGERPRINT = Fingerprint("", {})  # a step recorded without one: it is never compared


def fingerprint(parts: Mapping[str, Any]) -> Fingerprint:
    """The fingerprint of a step doing ``parts`` (plain JSON: prompt, input, schema...)."""
    hashes = {name: short_hash(canonical_json(value)) for name, value in sorted(parts.items())}
    return Fingerprint(short_hash(canonical_json(hashes), 24), hashes)


class SavedStep(Protocol):
    """What a store gives back for a recorded step."""

    @property
    def status(self) -> str: ...
    @property
    def output(self) -> Any: ...
    @property
    def fingerprint(self) -> str: ...
    @property
    def parts(self) -> dict[str, str]: ...
    @property
    def kind(self) -> str: ...


@runtime_checkable
class StepStore(Protocol):
    """The part of the run store the step log uses (``graphs.runs.RunStore``)."""

    def step(self, run_id: str, key: str) -> SavedStep | None: ...
    def start_step(self, run_id: str, key: str, kind: str, fingerprint: str,
                   parts: dict[str, str], cell: tuple[str, str, str] | None = None,
                   status: str = "running", group: str | None = None) -> None: ...
    def finish_step(self, run_id: str, key: str, output_json: str) -> None: ...
    def save_step(self, run_id: str, key: str, kind: str, output_json: str,
                  pipeline: str | None = None) -> None: ...
    def mark_step(self, run_id: str, key: str, status: str, error: str | None = None) -> None: ...
    def shape(self, run_id: str, name: str, kind: str, shape: dict[str, Any]) -> None: ...


@dataclass
class Replay:
    """What the log knows of a step about to be made: done (its output reusable) or not;
    ``stale`` when it is done but its fingerprint changed (``changed``: the parts)."""

    fingerprint: Fingerprint
    done: bool = False
    output: Any = None
    stale: bool = False
    changed: list[str] = field(default_factory=list)


class StepLog:
    """The recorded steps of a run, keyed under ``prefix`` (a node's visit, or none)."""

    def __init__(self, store: StepStore, run_id: str, prefix: str = "") -> None:
        self.store = store
        self.run_id = run_id
        self.prefix = prefix

    def saved(self, key: str) -> SavedStep | None:
        """The step as recorded (status ``running`` = it was in flight at a crash), or None."""
        return self.store.step(self.run_id, self.prefix + key)

    def replay(self, key: str, parts: Mapping[str, Any]) -> Replay:
        """Whether the step doing ``parts`` is done already with the same fingerprint."""
        now, row = fingerprint(parts), self.saved(key)
        if row is None or row.status != "done":
            return Replay(now)
        if row.fingerprint == now.value:
            return Replay(now, done=True, output=row.output)
        changed = [part for part, value in now.parts.items() if row.parts.get(part) != value]
        changed += [part for part in row.parts if part not in now.parts]
        return Replay(now, stale=True, changed=changed)

    def begin(self, key: str, kind: str, signed: Fingerprint = NO_FINGERPRINT, *,
              cell: tuple[str, str, str] | None = None, group: str | None = None,
              status: str = "running") -> None:
        """A step with an effect starts (or starts again): recorded before the effect."""
        self.store.start_step(self.run_id, self.prefix + key, kind, signed.value, signed.parts,
                              cell, status=status, group=group)

    def done(self, key: str, output: Any) -> None:
        """A begun step finished with ``output`` (plain JSON)."""
        self.store.finish_step(self.run_id, self.prefix + key, canonical_json(output))

    def save(self, key: str, kind: str, output: Any) -> None:
        """A step without an effect of its own (a model turn), recorded once it is done."""
        self.store.save_step(self.run_id, self.prefix + key, kind, canonical_json(output))

    def mark(self, key: str, status: str, error: str | None = None) -> None:
        """A begun step did not finish: it waits, failed or was cancelled (``error``)."""
        self.store.mark_step(self.run_id, self.prefix + key, status, error)

    def shape(self, name: str, kind: str, shape: dict[str, Any]) -> None:
        """A pipeline's or a fan-out group's shape, so its pending parts show too."""
        self.store.shape(self.run_id, self.prefix + name, kind, shape)

    def effect_key(self, key: str) -> str:
        """The key a step's effect is done under: the same after any crash and replay."""
        return f"{self.run_id}/{self.prefix}{key}"


class NodeSteps(StepLog):
    """The recorded steps of one visit of one node of one run, and the answer that visit was
    woken with (``answer``; ``NO_ANSWER`` when none)."""

    def __init__(self, store: StepStore, run_id: str, node: str, visit: int,
                 answer: Any = NO_ANSWER) -> None:
        super().__init__(store, run_id, f"{node}:{visit}/")
        self.answer = answer

    def resume_value(self, default: Any = None) -> Any:
        """The answer the visit was woken with, else ``default``."""
        return default if self.answer is NO_ANSWER else self.answer


def node_steps(context: RunContext | None) -> NodeSteps | None:
    """The step log of the visit ``context`` is of, in a durable run; else None."""
    if context is None or not isinstance(store := context.events.store, StepStore):
        return None
    return NodeSteps(store, context.events.run_id, context.node, context.visit, context.answer)

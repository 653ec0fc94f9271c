"""The machinery behind code workflows: the current run, memoised calls, fingerprints, events.

The runner (``graphs.flows.Workflow``) sets the current run in a context variable, so the
primitives (``agent``, ``step``, ``parallel``, ``pipeline``, ``ask``) find it without a context
object in the author's code. ``FlowRun.memo`` is the one way a call is made: it returns the
saved output when the step's fingerprint still matches, refuses (naming the step and the parts
that changed) when it does not, unless the run was given a re-run choice, and otherwise runs
the call and records it (a row in ``run_steps``, ``node_start``/``node_end`` events).
"""

from __future__ import annotations

import contextvars
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from graphs.engine import Observer
from graphs.flows_codec import canonical, fingerprint, from_json, to_json
from graphs.flows_store import StepLog
from graphs.store import RunStore


class FlowError(RuntimeError):
    """A code workflow broke a rule (a call outside a run, a key used twice, a bad reply)."""


class FingerprintMismatch(FlowError):
    """Replay found a saved step whose prompt, input, return schema or options changed."""

    def __init__(self, key: str, changed: list[str]) -> None:
        super().__init__(
            f"step {key!r} changed since it ran ({', '.join(changed)} differ); its saved "
            f"output was not reused. Re-run it with graphs.flows.rerun(store, run_id, "
            f"[{key!r}]) or start a new run")
        self.key, self.changed = key, changed


class Suspended(BaseException):  # a signal, not an error; a BaseException so
    """An ``ask`` is waiting for the owner; the run parks (``except Exception`` can't eat it)."""

    def __init__(self, wait: dict[str, Any]) -> None:
        super().__init__("waiting for an answer")
        self.wait = wait


class FlowModel(Protocol):
    """A model an agent step calls: ``bot.models.Model`` satisfies this."""

    async def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Observer | None = None) -> Any: ...


class FlowLoop(Protocol):
    """The tool loop an agent step with tools runs: ``bot.agent.run_loop`` satisfies this."""

    def __call__(self, model: Any, messages: list[dict[str, Any]], tools: Any, caller: Any, *,
                 max_iterations: int = 8, observer: Observer | None = None,
                 purpose: str = "agent") -> Awaitable[Any]: ...


@dataclass(frozen=True)
class AgentKit:
    """What ``agent`` steps use: models by role (the first is the default) and the tool loop."""

    models: Mapping[str, FlowModel] = field(default_factory=dict)
    loop: FlowLoop | None = None

    def model(self, choice: str | FlowModel | None) -> FlowModel:
        if choice is not None and not isinstance(choice, str):
            return choice
        if not self.models:
            raise FlowError("this workflow has no models: pass agents=AgentKit(models=...) to "
                            "@workflow, or model=... to agent()")
        if choice is None:
            return next(iter(self.models.values()))
        if choice not in self.models:
            raise FlowError(f"no model {choice!r}: this workflow has {sorted(self.models)}")
        return self.models[choice]


log = logging.getLogger(__name__)
_current: contextvars.ContextVar[FlowRun] = contextvars.ContextVar("flow_run")
_scope: contextvars.ContextVar[str] = contextvars.ContextVar("flow_scope", default="")


def current() -> FlowRun:
    """The run the calling code belongs to; a FlowError outside a workflow."""
    run = _current.get(None)
    if run is None:
        raise FlowError("agent/step/parallel/pipeline/ask only work inside a @workflow function "
                        "run by Workflow.start (or resumed by graphs.durable)")
    return run


def scoped(key: str) -> str:
    """``key`` under the enclosing call's key (inside a pipeline cell, an ask's revision...)."""
    return _scope.get() + key


class FlowRun:
    """One execution of a workflow function: its store, run id, re-run choices and events."""

    def __init__(self, store: RunStore, run_id: str, agents: AgentKit,
                 observer: Observer | None, reruns: set[str]) -> None:
        self.store, self.run_id, self.agents, self.observer = store, run_id, agents, observer
        self.steps = StepLog(store.conn)
        self.reruns = reruns
        self.cascade = False  # set once a chosen re-run happened: its consequences re-run too
        self.used: dict[str, str] = {}  # key -> fingerprint, within this execution

    def bind(self) -> tuple[contextvars.Token[FlowRun], contextvars.Token[str]]:
        return _current.set(self), _scope.set("")

    @staticmethod
    def unbind(tokens: tuple[contextvars.Token[FlowRun], contextvars.Token[str]]) -> None:
        _current.reset(tokens[0])
        _scope.reset(tokens[1])

    def emit(self, kind: str, *, delta: dict[str, Any] | None = None,
             frontier: dict[str, Any] | None = None, **fields: Any) -> dict[str, Any]:
        """Record one event (and hand it to the observer); a graph_end sets the run status."""
        event = {"event": kind, **fields, "run_id": self.run_id, "t": time.time()}
        if self.observer is not None:
            try:
                self.observer(event)
            except Exception:  # a broken trace must not break the run
                log.exception("workflow observer failed on %s", kind)
        self.store.append(self.run_id, [event], delta, frontier)
        return event

    def sink(self, key: str) -> Observer:
        """An observer for a model or loop inside step ``key``: its events join the run's."""
        def forward(event: dict[str, Any]) -> None:
            fields = {k: v for k, v in event.items() if k not in ("event", "run_id", "t")}
            self.emit(str(event.get("event", "")), **{**fields, "node": key})
        return forward

    def may_rerun(self, key: str, changed: list[str]) -> bool:
        """A chosen re-run: '*', the key, a key prefix, or the key's own name."""
        if self.cascade and set(changed) <= {"input"}:  # fed by a step that re-ran
            return True
        name = key.rsplit("/", 1)[-1].split("[", 1)[0]
        return any(c in ("*", key, name) or key.startswith(c + "/") for c in self.reruns)

    def check(self, key: str, fp: str, hashes: dict[str, str]) -> tuple[bool, Any]:
        """(True, saved output) when the step is done and still matches; refuse a mismatch."""
        previous = self.used.get(key)
        if previous is not None and previous != fp:
            raise FlowError(f"step {key!r} was called twice in this run with different "
                            "prompt or input: give each call its own key_by=...")
        self.used[key] = fp
        row = self.steps.get(self.run_id, key)
        if row is None or row.status != "done":
            return False, None
        if row.fingerprint == fp:
            return True, row.output
        changed = [part for part, value in hashes.items() if row.parts.get(part) != value]
        changed += [part for part in row.parts if part not in hashes]
        if not self.may_rerun(key, changed or ["fingerprint"]):
            raise FingerprintMismatch(key, changed or ["fingerprint"])
        self.cascade = True
        self.emit("step_rerun", node=key, changed=changed)
        return False, None

    async def memo(self, key: str, kind: str, parts: dict[str, Any], returns: Any,
                   compute: Callable[[str], Awaitable[Any]],
                   cell: tuple[str, str, str] | None = None) -> Any:
        """The saved output of ``key`` if its fingerprint matches, else run and record it."""
        key = scoped(key)
        fp, hashes = fingerprint(parts)
        done, saved = self.check(key, fp, hashes)
        if done:
            return from_json(returns, saved)
        self.steps.start(self.run_id, key, kind, fp, hashes, cell)
        self.emit("node_start", node=key, step=kind)
        started, token = time.perf_counter(), _scope.set(key + "/")
        try:
            value = await compute(key)
            output = canonical(value)
        except Suspended:
            self.steps.mark(self.run_id, key, "waiting")
            raise
        except BaseException as exc:
            error = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
            self.steps.mark(self.run_id, key,
                            "failed" if isinstance(exc, Exception) else "cancelled", error)
            self.emit("node_end", node=key, step=kind, duration_s=time.perf_counter() - started,
                      wrote=[], error=error)
            raise
        finally:
            _scope.reset(token)
        self.steps.finish(self.run_id, key, output)
        self.emit("node_end", node=key, step=kind, duration_s=time.perf_counter() - started,
                  wrote=[key])
        return from_json(returns, to_json(value))

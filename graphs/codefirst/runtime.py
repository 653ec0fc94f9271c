"""The machinery behind code workflows: the current run, memoised calls, fingerprints, waits.

The runner (``graphs.codefirst.workflow``) sets the current run, with the key of the call under
way, in one context variable, so the primitives (``agent``, ``step``, ``parallel``,
``pipeline``, ``ask``) find it without a context object in the author's code.
``FlowRun.memo`` is the one way a call is made, through the run's step log
(``graphs.checkpoints.StepLog``, the one a node's inner steps use too): it returns the saved
output when the step's fingerprint still matches, refuses (naming the step and the parts that
changed) when it does not, unless the run was given a re-run choice, and otherwise runs the
call and records it (a ``run_steps`` row, ``node_start``/``node_end`` events through
``graphs.events.RunEvents``). ``FlowRun.park`` is how an ``ask`` waits.
``FlowCall`` is a call not made yet: awaiting it makes it; ``parallel`` and ``pipeline`` take
it as it is.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Awaitable, Callable, Generator, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Generic, NamedTuple, TypeVar

from graphs.checkpoints import Replay, StepLog
from graphs.codefirst.codec import canonical, from_json, to_json
from graphs.events import EventKind, RunEvents, describe
from graphs.graph import Observer, Suspend
from graphs.protocols import AgentLoop, ChatModel, chat_of, chosen_model
from graphs.runs.store import RunStore

T = TypeVar("T")


class FlowError(RuntimeError):
    """A code workflow broke a rule (a call outside a run, a key used twice, a bad reply)."""


class FingerprintMismatch(FlowError):
    """Replay found a saved step whose prompt, input, return schema or options changed."""

    def __init__(self, key: str, changed: list[str]) -> None:
        super().__init__(
            f"step {key!r} changed since it ran ({', '.join(changed)} differ); its saved "
            f"output was not reused. Re-run it with runs.rerun(run_id, [{key!r}]) or start a "
            "new run")
        self.key, self.changed = key, changed


@dataclass(frozen=True)
class AgentKit:
    """What ``agent`` steps use: models by role (the first is the default) and the tool loop."""

    models: Mapping[str, ChatModel] = field(default_factory=dict)
    loop: AgentLoop | None = None

    def model(self, choice: str | ChatModel | None) -> ChatModel:
        if choice is not None and not isinstance(choice, str):
            return choice
        if not self.models:
            raise FlowError("this workflow has no models: pass agents=AgentKit(models=...) to "
                            "@workflow (or workflow.using(AgentKit(...))), or model=... to "
                            "agent()")
        if choice is None:
            return next(iter(self.models.values()))
        if choice not in self.models:
            raise FlowError(f"no model {choice!r}: this workflow has {sorted(self.models)}")
        return self.models[choice]


class Where(NamedTuple):
    """Where the calling code is: its run, the key its calls go under, its fan-out group."""

    run: FlowRun
    prefix: str = ""
    group: str | None = None


# The one context variable of code workflows. A workflow is the author's plain async code:
# ``agent``/``step``/``ask`` are called inside the author's own functions (pipeline stages, an
# ask's ``revise``, helpers), at any depth, and in the tasks ``parallel`` starts; a parameter
# would have to pass through every one of them, so the run and the enclosing key travel with
# the task instead (each task copies it, so parallel calls never see each other's keys).
_where: contextvars.ContextVar[Where] = contextvars.ContextVar("flow_where")


def here() -> Where:
    """Where the calling code is; a FlowError outside a workflow."""
    where = _where.get(None)
    if where is None:
        raise FlowError("agent/step/parallel/pipeline/ask only work inside a @workflow function "
                        "run by Workflow.start (or continued by graphs.runs.Runs)")
    return where


def current() -> FlowRun:
    """The run the calling code belongs to; a FlowError outside a workflow."""
    return here().run


def scoped(key: str) -> str:
    """``key`` under the enclosing call's key (inside a pipeline cell, an ask's revision...)."""
    return here().prefix + key


@contextmanager
def within(prefix: str, group: str | None = None) -> Iterator[None]:
    """Calls made inside are keyed under ``prefix`` (already scoped) and belong to ``group``."""
    token = _where.set(Where(current(), prefix, group))
    try:
        yield
    finally:
        _where.reset(token)


@contextmanager
def member_of(group: str) -> Iterator[None]:
    """The calls made inside (not their own inner calls) belong to the fan-out ``group``."""
    token = _where.set(here()._replace(group=group))
    try:
        yield
    finally:
        _where.reset(token)


class FlowCall(Generic[T]):
    """A call not made yet (``agent``, ``step``, ``ask``, ``approve``): awaiting it makes it,
    memoised under its key; ``parallel`` and ``pipeline`` take it as a child or a stage."""

    name: str  # what it is called in keys and drawings
    kind: str  # agent | step | ask
    returns: Any  # the type its result is rebuilt as on replay

    @property
    def key(self) -> str:
        """Its key relative to the enclosing scope."""
        return self.name

    def parts(self) -> dict[str, Any]:
        """What its fingerprint covers (prompt, input, return schema, options...)."""
        raise NotImplementedError

    async def compute(self, key: str) -> Any:
        """Make the call itself, not memoised (``memo`` records it under ``key``)."""
        raise NotImplementedError

    async def run(self) -> T:
        found: T = await current().memo(self.key, self.kind, self.parts(), self.returns,
                                        self.compute)
        return found

    def __await__(self) -> Generator[Any, None, T]:
        return self.run().__await__()


class FlowRun:
    """One execution of a workflow function: its store, step log, re-run choices, events."""

    def __init__(self, store: RunStore, run_id: str, agents: AgentKit,
                 observer: Observer | None, reruns: set[str],
                 meta: Mapping[str, Any] | None = None) -> None:
        self.store, self.run_id = store, run_id
        self.agents = agents
        self.chat = chat_of(meta or {})  # whose /model choice its big model follows
        self.events = RunEvents(run_id, observer, store)
        self.steps = StepLog(store, run_id)
        self.reruns = reruns
        self.cascade = False  # set once a chosen re-run happened: its consequences re-run too
        self.used: dict[str, str] = {}  # key -> fingerprint, within this execution
        self.waiting: dict[str, dict[str, Any]] = {}  # node -> the wait it parked on

    @contextmanager
    def bound(self) -> Iterator[None]:
        """The primitives find this run while the workflow function runs."""
        token = _where.set(Where(self))
        try:
            yield
        finally:
            _where.reset(token)

    def frontier(self) -> dict[str, Any]:
        """What the run waits on, as the run layer stores it (a code run has no ready nodes)."""
        return self.events.frontier([], self.waiting, {})

    def park(self, wait: dict[str, Any], new: bool) -> Suspend:
        """Wait on ``wait`` (recorded, with its run_waits row, when ``new``); the signal."""
        self.waiting[wait["node"]] = wait
        if new:
            self.events.park(wait, self.frontier())
        return Suspend(**wait)

    def shape(self, name: str, kind: str, shape: dict[str, Any]) -> None:
        """Record a pipeline's or a fan-out group's shape (once: unchanged, it is kept)."""
        row, marker = self.steps.saved(name), canonical(shape)
        if row is not None and row.kind != kind:
            raise FlowError(f"{kind} {name!r} has the key of a {row.kind}: pass name=... to "
                            "tell them apart")
        if self.used.setdefault(name, marker) != marker:
            raise FlowError(f"two {kind}s are called {name!r} in this run: pass name=... to "
                            "tell them apart")
        if row is None or canonical(row.output) != marker:
            self.steps.shape(name, kind, shape)

    def model(self, choice: str | ChatModel | None) -> ChatModel:
        """The kit's model for ``choice``, as the run's chat chose it (``/model``)."""
        return chosen_model(self.agents.model(choice), self.chat)

    def forward(self, key: str) -> Observer:
        """An observer for a model or loop inside step ``key``: its events join the run's."""
        return self.events.forward(key, record=True)

    def may_rerun(self, key: str, changed: list[str]) -> bool:
        """A chosen re-run: '*', the key, a key prefix, or the key's own name."""
        if self.cascade and set(changed) <= {"input"}:  # fed by a step that re-ran
            return True
        name = key.rsplit("/", 1)[-1].split("[", 1)[0].split("#", 1)[0]
        return any(c in ("*", key, name) or key.startswith(c + "/") for c in self.reruns)

    def check(self, key: str, parts: dict[str, Any]) -> Replay:
        """The step log's replay of ``key``: done with the saved output when it still
        matches; a changed step is refused unless the run was asked to re-run it."""
        replay = self.steps.replay(key, to_json(parts))
        if self.used.setdefault(key, replay.fingerprint.value) != replay.fingerprint.value:
            raise FlowError(f"step {key!r} was called twice in this run with different "
                            "prompt or input: give each call its own key_by=...")
        if replay.stale:
            if not self.may_rerun(key, replay.changed or ["fingerprint"]):
                raise FingerprintMismatch(key, replay.changed or ["fingerprint"])
            self.cascade = True
            self.events.emit(EventKind.STEP_RERUN, node=key, changed=replay.changed)
        return replay

    async def memo(self, key: str, kind: str, parts: dict[str, Any], returns: Any,
                   compute: Callable[[str], Awaitable[Any]],
                   cell: tuple[str, str, str] | None = None) -> Any:
        """The saved output of ``key`` if its fingerprint matches, else run and record it."""
        where = here()
        key, group = where.prefix + key, where.group
        replay = self.check(key, parts)
        if replay.done:
            return from_json(returns, replay.output)
        self.steps.begin(key, kind, replay.fingerprint, cell=cell, group=group)
        self.events.emit(EventKind.NODE_START, node=key, step=kind)
        self.events.record()
        started = time.perf_counter()
        try:
            with within(key + "/"):
                value = await compute(key)
            output = to_json(value)
        except Suspend:
            self.steps.mark(key, "waiting")
            raise
        except BaseException as exc:
            error = describe(exc)
            self.steps.mark(key, "failed" if isinstance(exc, Exception) else "cancelled", error)
            self.events.emit(EventKind.NODE_END, node=key, step=kind, wrote=[], error=error,
                             duration_s=time.perf_counter() - started)
            self.events.record()
            raise
        self.steps.done(key, output)
        self.events.emit(EventKind.NODE_END, node=key, step=kind, wrote=[key],
                         duration_s=time.perf_counter() - started)
        self.events.record()
        return from_json(returns, output)

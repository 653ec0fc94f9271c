"""Code-first durable workflows: ``@workflow`` and the primitives ``agent``, ``step``,
``parallel``, ``pipeline`` and ``ask`` — plain async Python whose calls survive a restart.

Every completed call is recorded in the run store under a stable key (its name, or
``name[key_by]``); when a run continues (an answer, a crash recovery) the workflow function
runs again from the top and completed calls return their saved output, rebuilt as the type
asked for, as long as their fingerprint (prompt, input, return schema, model options) still
matches. A mismatch refuses, naming the step; ``rerun(store, run_id, [key])`` is the explicit
choice to run it again. ``ask`` parks the run on a ``run_waits`` row, like ``human_node``.

Usage::

    @workflow(name="greet", agents=AgentKit(models={"big": model}))
    async def greet(who: str) -> dict[str, str]:
        card = await agent("card", prompt="Write a short card.", input=who, returns=Card)
        decision = await ask(lambda c: f"Send this?\\n{c.text}", key="send", input=card,
                             returns=Card)
        return {"reply": decision.value.text if decision.approved else "Not sent."}

    result = await greet.start(store, {"who": "Ann"})   # status 'waiting': the question is open
    result = await resume(store, result.run_id, "Approve", by="owner")   # graphs.durable
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import typing
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any, cast

from graphs.engine import Graph, GraphRunError, Observer, RunResult
from graphs.flows_ask import Decision, ask
from graphs.flows_codec import (
    from_json,
    json_instruction,
    label,
    parse_object,
    schema,
    to_json,
)
from graphs.flows_runtime import (
    AgentKit,
    FingerprintMismatch,
    FlowError,
    FlowRun,
    Suspended,
    current,
    scoped,
)
from graphs.flows_store import StepLog, flow_view
from graphs.store import RunStore

__all__ = ["AgentKit", "Decision", "FingerprintMismatch", "FlowError", "Workflow", "agent",
           "ask", "flow_view", "parallel", "pipeline", "rerun", "step", "workflow"]

log = logging.getLogger(__name__)
Call = Awaitable[Any] | Callable[[], Awaitable[Any]]


class Workflow:
    """A workflow function with its name and agent services; run it with ``start``."""

    def __init__(self, name: str, fn: Callable[..., Awaitable[Any]], agents: AgentKit) -> None:
        self.name, self.fn, self.agents = name, fn, agents
        self.__doc__ = fn.__doc__

    def register(self, store: RunStore) -> None:
        """Make the workflow findable by name, so ``graphs.durable`` can continue its runs."""
        StepLog(store.conn)  # applies the run_steps migration
        store.graphs[self.name] = cast(Graph, self)  # durable only needs continue_run

    async def start(self, store: RunStore, input: Mapping[str, Any] | None = None, *,
                    run_id: str | None = None, meta: Mapping[str, Any] | None = None,
                    observer: Observer | None = None) -> RunResult:
        """Run the function with ``input`` as keyword arguments; returns like ``run_graph``."""
        self.register(store)
        result = RunResult(dict(input or {}), meta)
        result.run_id = run_id or uuid.uuid4().hex[:16]
        store.begin(result.run_id, cast(Graph, self), result, 0)
        return await self._execute(store, result, observer, set(), resumed=False)

    async def continue_run(self, store: RunStore, run_id: str,
                           observer: Observer | None = None) -> RunResult:
        """Run the function again from the top: finished calls return their saved output."""
        row = store.conn.execute("SELECT input, meta FROM runs WHERE id = ?",
                                 (run_id,)).fetchone()
        if row is None:
            raise GraphRunError(f"there is no run {run_id!r}")
        result = RunResult(json.loads(row[0]), json.loads(row[1]))
        result.run_id = run_id
        store._seq[run_id] = store.next_seq(run_id)  # another process may have written since
        return await self._execute(store, result, observer, StepLog(store.conn).reruns(run_id),
                                   resumed=True)

    async def _execute(self, store: RunStore, result: RunResult, observer: Observer | None,
                       reruns: set[str], resumed: bool) -> RunResult:
        assert result.run_id is not None
        run = FlowRun(store, result.run_id, self.agents, observer, reruns)
        if resumed:
            run.emit("graph_start", workflow=self.name, code=True, resumed=True)
        else:
            run.emit("graph_start", workflow=self.name, code=True)
        tokens = run.bind()
        try:
            value = await self.fn(**dict(result))
        except Suspended as parked:
            run.emit("graph_end", status="waiting")
            result.status, result.waits = "waiting", [parked.wait]
            return result
        except Exception as exc:
            error = f"{type(exc).__name__}: {exc}"
            log.warning("workflow %s run %s failed: %s", self.name, result.run_id, error)
            run.emit("graph_end", status="failed", error=error, delta={"error": error},
                     frontier={"ready": [], "waiting": {}})
            result["error"], result.status = error, "failed"
            return result
        finally:
            run.unbind(tokens)
        data = to_json(value)
        writes = data if isinstance(data, dict) else {"result": data}
        run.emit("graph_end", status="completed", delta=writes,
                 frontier={"ready": [], "waiting": {}})
        result.update(writes)
        result.status = "completed"
        return result


def workflow(*, name: str, agents: AgentKit | None = None
             ) -> Callable[[Callable[..., Awaitable[Any]]], Workflow]:
    """Decorate an async function as a durable workflow called ``name``."""
    def wrap(fn: Callable[..., Awaitable[Any]]) -> Workflow:
        return Workflow(name, fn, agents or AgentKit())
    return wrap


async def rerun(store: RunStore, run_id: str, steps: Sequence[str] = ("*",),
                observer: Observer | None = None) -> RunResult:
    """Continue a run, running again the named changed steps ('*': every changed step).

    A name matches a step's key, a key prefix (a whole pipeline or ask), or the plain name of
    keyed steps; steps fed only by a re-run step's new output re-run too. The choice is
    recorded with the run, so a later resume keeps it.
    """
    run = store.run(run_id)
    target = store.graphs.get(run.workflow) if run else None
    if run is None or not hasattr(target, "continue_run"):
        raise FlowError(f"run {run_id!r} is not a run of a registered code workflow")
    store.conn.execute("UPDATE runs SET status = 'running', error = NULL, ended_at = NULL,"
                       " updated_at = ? WHERE id = ? AND status != 'cancelled'",
                       (time.time(), run_id))
    store._seq.pop(run_id, None)
    store.append(run_id, [{"event": "rerun", "steps": list(steps), "run_id": run_id,
                           "t": time.time()}])
    return await cast(Workflow, target).continue_run(store, run_id, observer)


def _return_type(fn: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(fn).get("return", Any)
    except Exception:  # a lambda, a builtin, a name only its closure knows
        return Any


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(to_json(value), ensure_ascii=False, indent=2, sort_keys=True)


def _parse(key: str, text: str, returns: Any) -> Any:
    """A reply's text as ``returns``: the text itself, or JSON rebuilt as that type."""
    if returns is str:
        return text.strip()
    data: Any = parse_object(text)
    if data is None:
        try:
            data = json.loads(text)
        except ValueError:
            raise FlowError(f"agent step {key!r}: the reply is not the JSON for "
                            f"{getattr(returns, '__name__', returns)}: {text[:120]!r}") from None
    try:
        return from_json(returns, data)
    except (TypeError, KeyError, ValueError) as exc:
        raise FlowError(f"agent step {key!r}: the reply does not fit "
                        f"{getattr(returns, '__name__', returns)}: {exc}") from None


async def agent(name: str, *, prompt: str, input: Any = None, returns: Any = str,
                key_by: Any = None, model: Any = None, tools: Any = None, caller: Any = None,
                max_tokens: int = 1024, max_iterations: int = 8) -> Any:
    """One agent step: a model call (or, with ``tools``, the tool loop) rebuilt as ``returns``.

    ``prompt`` is the instruction (a dataclass ``returns`` adds its JSON shape to it),
    ``input`` the data it works on, ``key_by`` tells apart calls of the same name,
    ``model`` a role of the workflow's ``AgentKit`` (default: its first) or a model.
    """
    run = current()
    chosen = run.agents.model(model)
    system = prompt + json_instruction(returns)
    messages = [{"role": "system", "content": system}, {"role": "user", "content": _render(input)}]
    options = {"model": getattr(chosen, "name", None), "provider": getattr(chosen, "provider",
                                                                           None),
               "max_tokens": max_tokens, "tools": None if tools is None else max_iterations}
    parts = {"prompt": system, "input": to_json(input), "returns": schema(returns),
             "options": options}

    async def call(key: str) -> Any:
        if tools is None:
            reply = await chosen.complete(messages, max_tokens=max_tokens, purpose=name,
                                          observer=run.sink(key))
            return _parse(key, str(reply.text), returns)
        if run.agents.loop is None:
            raise FlowError(f"agent step {key!r} has tools but the workflow has no loop: "
                            "pass AgentKit(loop=...)")
        result = await run.agents.loop(chosen, messages, tools, caller,
                                       max_iterations=max_iterations, observer=run.sink(key),
                                       purpose=name)
        if getattr(result, "error", None):  # a model failure is not an answer to keep
            raise FlowError(f"agent step {key!r}: {result.error}")
        return _parse(key, str(result.text), returns)

    key = name if key_by is None else f"{name}[{label(key_by)}]"
    return await run.memo(key, "agent", parts, returns, call)


async def step(fn: Callable[..., Any], *args: Any, key: str | None = None, returns: Any = None,
               **kwargs: Any) -> Any:
    """Deterministic local Python, memoised: ``fn(*args, **kwargs)`` once per run and key."""
    run = current()
    kind = returns if returns is not None else _return_type(fn)
    parts = {"input": {"args": to_json(list(args)), "kwargs": to_json(kwargs)},
             "returns": schema(kind)}

    async def call(_: str) -> Any:
        value = fn(*args, **kwargs)
        return await value if isinstance(value, Awaitable) else value

    return await run.memo(key or str(getattr(fn, "__name__", "step")), "step", parts, kind, call)


async def _gather(calls: Sequence[Callable[[], Awaitable[Any]]], limit: int | None,
                  fail_fast: bool) -> list[Any]:
    """Start every call (at most ``limit`` at once), results in input order."""
    gate = asyncio.Semaphore(limit) if limit else None

    async def guarded(call: Callable[[], Awaitable[Any]]) -> Any:
        if gate is None:
            return await call()
        async with gate:
            return await call()

    tasks = [asyncio.ensure_future(guarded(call)) for call in calls]
    if fail_fast:
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
    results = await asyncio.gather(*tasks, return_exceptions=True)
    for outcome in results:  # waiting, refusing or cancelling is never "a failure to collect"
        if isinstance(outcome, Suspended | FingerprintMismatch) or (
                isinstance(outcome, BaseException) and not isinstance(outcome, Exception)):
            raise outcome
    return list(results)


async def parallel(calls: Iterable[Call], *, limit: int | None = None,
                   fail_fast: bool = True) -> list[Any]:
    """Run calls (``agent(...)``, ``step(...)``, or zero-argument functions) at once.

    At most ``limit`` run at a time; results come in input order. ``fail_fast`` (default)
    cancels the others at the first failure and raises it; ``fail_fast=False`` waits for all
    and puts each failure's exception in its place.
    """
    return await _gather([_starter(call) for call in calls], limit, fail_fast)


def _starter(call: Call) -> Callable[[], Awaitable[Any]]:
    if callable(call):
        return call

    async def started() -> Any:
        return await call
    return started


async def pipeline(items: Iterable[Any], *stages: Callable[[Any], Awaitable[Any]],
                   limit: int | None = None, name: str | None = None,
                   key_by: Callable[[Any], Any] | None = None,
                   fail_fast: bool = True) -> list[Any]:
    """Every item through the stages in order (each stage gets the previous one's output).

    Each (item, stage) cell is recorded, so a continued run skips finished cells and starts
    at the first unfinished stage of each item. At most ``limit`` items are in flight; an
    item's key is ``key_by(item)`` (default: the item itself, or a hash of it).
    """
    run, values = current(), list(items)
    stage_names = [getattr(stage, "__name__", f"stage{n}") for n, stage in enumerate(stages, 1)]
    relative = name or "+".join(stage_names)
    labels = [label(key_by(item) if key_by else item) for item in values]
    if len(set(labels)) != len(labels) or len(set(stage_names)) != len(stage_names):
        raise FlowError(f"pipeline {relative!r}: two items (or stages) share a key; pass "
                        "key_by=... (or name the stage functions apart)")
    full = scoped(relative)
    run.steps.layout(run.run_id, full, labels, stage_names)

    def cell(stage: Callable[[Any], Awaitable[Any]], value: Any) -> Callable[[str], Awaitable[Any]]:
        async def call(_: str) -> Any:
            return await stage(value)
        return call

    async def through(item_label: str, value: Any) -> Any:
        for stage_name, stage in zip(stage_names, stages, strict=True):
            kind = _return_type(stage)
            value = await run.memo(f"{relative}/{item_label}/{stage_name}", "cell",
                                   {"input": to_json(value), "returns": schema(kind)}, kind,
                                   cell(stage, value), cell=(full, item_label, stage_name))
        return value

    def start(item_label: str, value: Any) -> Callable[[], Awaitable[Any]]:
        return lambda: through(item_label, value)

    return await _gather([start(lb, v) for lb, v in zip(labels, values, strict=True)],
                         limit, fail_fast)

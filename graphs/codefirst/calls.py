"""The calls of a code workflow: ``agent`` and ``step`` (call objects), ``parallel``, ``pipeline``.

``agent(...)`` and ``step(...)`` build a call without making it; ``await`` makes it, memoised
under its key. ``parallel`` runs calls at once and records them as one fan-out group;
``pipeline`` takes every item through its stages, one recorded cell per (item, stage). A stage
is an async function, an agent call without ``input`` (the item, or the previous stage's
output, is its input), or a function returning a call (``lambda s: approve(...)``). A cell's
fingerprint covers what its stage is: an agent stage's prompt, model options and return type,
an ask's question, a function's own text.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import json
import typing
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar, overload

from graphs.codefirst.codec import code_text, from_json, json_instruction, label, schema, to_json
from graphs.codefirst.runtime import (
    FingerprintMismatch,
    FlowCall,
    FlowError,
    current,
    member_of,
    scoped,
)
from graphs.graph import Suspend
from graphs.protocols import ChatModel, parse_json_object

Child = FlowCall[Any] | Awaitable[Any] | Callable[[], Awaitable[Any]]
Stage = FlowCall[Any] | Callable[[Any], Awaitable[Any]]
_NO_INPUT: Any = object()  # an agent call whose input a pipeline gives
T = TypeVar("T")


def _render(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(to_json(value), ensure_ascii=False, indent=2, sort_keys=True)


def _parse(key: str, text: str, returns: Any) -> Any:
    """A reply's text as ``returns``: the text itself, or JSON rebuilt as that type."""
    if returns is str:
        return text.strip()
    data: Any = parse_json_object(text)
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


class AgentCall(FlowCall[T]):
    """One agent step not made yet: a model call (or, with ``tools``, the tool loop)."""

    kind = "agent"

    def __init__(self, name: str, prompt: str, input: Any, returns: Any, key_by: Any,
                 model: str | ChatModel | None, tools: Any, caller: Any, max_tokens: int,
                 max_iterations: int) -> None:
        self.name = name
        self.prompt = prompt
        self.input = input
        self.returns = returns
        self.key_by = key_by
        self.model = model
        self.tools = tools
        self.caller = caller
        self.max_tokens, self.max_iterations = max_tokens, max_iterations

    @property
    def key(self) -> str:
        return self.name if self.key_by is None else f"{self.name}[{label(self.key_by)}]"

    def given(self, value: Any) -> AgentCall[T]:
        """This call with ``value`` as its input (a pipeline stage's item)."""
        if self.input is not _NO_INPUT:
            raise FlowError(f"pipeline stage agent({self.name!r}) has an input of its own: "
                            "leave input out, the item (or the previous stage's output) is it")
        bound = copy.copy(self)
        bound.input = value
        return bound

    def _messages(self) -> list[dict[str, Any]]:
        if self.input is _NO_INPUT:
            raise FlowError(f"agent({self.name!r}) has no input: pass input=..., or give the "
                            "call to pipeline() as a stage")
        system = self.prompt + json_instruction(self.returns)
        return [{"role": "system", "content": system},
                {"role": "user", "content": _render(self.input)}]

    def parts(self) -> dict[str, Any]:
        chosen = current().model(self.model)
        options = {"model": getattr(chosen, "name", None),
                   "provider": getattr(chosen, "provider", None), "max_tokens": self.max_tokens,
                   "tools": None if self.tools is None else self.max_iterations}
        return {"prompt": self._messages()[0]["content"], "input": to_json(self.input),
                "returns": schema(self.returns), "options": options}

    async def compute(self, key: str) -> Any:
        run = current()
        chosen, messages = run.model(self.model), self._messages()
        if self.tools is None:
            reply = await chosen.complete(messages, max_tokens=self.max_tokens,
                                          purpose=self.name, observer=run.forward(key))
            return _parse(key, str(reply.text), self.returns)
        if run.agents.loop is None:
            raise FlowError(f"agent step {key!r} has tools but the workflow has no loop: "
                            "pass AgentKit(loop=...)")
        result = await run.agents.loop(chosen, messages, self.tools, self.caller,
                                       max_iterations=self.max_iterations,
                                       observer=run.forward(key), purpose=self.name)
        if error := getattr(result, "error", None):  # a model failure is not an answer to keep
            raise FlowError(f"agent step {key!r}: {error}")
        return _parse(key, str(result.text), self.returns)


@overload
def agent(name: str, *, prompt: str, input: Any = ..., key_by: Any = ...,
          model: str | ChatModel | None = ..., tools: Any = ..., caller: Any = ...,
          max_tokens: int = ..., max_iterations: int = ...) -> AgentCall[str]: ...
@overload
def agent(name: str, *, prompt: str, input: Any = ..., returns: type[T], key_by: Any = ...,
          model: str | ChatModel | None = ..., tools: Any = ..., caller: Any = ...,
          max_tokens: int = ..., max_iterations: int = ...) -> AgentCall[T]: ...
@overload
def agent(name: str, *, prompt: str, input: Any = ..., returns: Any, key_by: Any = ...,
          model: str | ChatModel | None = ..., tools: Any = ..., caller: Any = ...,
          max_tokens: int = ..., max_iterations: int = ...) -> AgentCall[Any]: ...
def agent(name: str, *, prompt: str, input: Any = _NO_INPUT, returns: Any = str,
          key_by: Any = None, model: str | ChatModel | None = None, tools: Any = None,
          caller: Any = None, max_tokens: int = 1024, max_iterations: int = 8) -> AgentCall[Any]:
    """One agent step, made when awaited, its reply rebuilt as ``returns`` (default: str).

    ``prompt`` is the instruction (a dataclass ``returns`` adds its JSON shape to it),
    ``input`` the data it works on (left out for a pipeline stage: the item is), ``key_by``
    tells apart calls of the same name, ``model`` a role of the workflow's ``AgentKit``
    (default: its first) or a model; with ``tools`` it runs the kit's tool loop.
    """
    return AgentCall(name, prompt, input, returns, key_by, model, tools, caller, max_tokens,
                     max_iterations)


def _return_type(fn: Callable[..., Any]) -> Any:
    try:
        return typing.get_type_hints(fn).get("return", Any)
    except Exception:  # a lambda, a builtin, a name only its closure knows
        return Any


class StepCall(FlowCall[Any]):
    """Deterministic local Python not run yet: ``fn(*args, **kwargs)``."""

    kind = "step"

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 key: str | None, returns: Any) -> None:
        self.fn = fn
        self.args = args
        self.kwargs = kwargs
        self.name = key or str(getattr(fn, "__name__", "step"))
        self.returns = returns if returns is not None else _return_type(fn)

    def parts(self) -> dict[str, Any]:
        return {"input": {"args": to_json(list(self.args)), "kwargs": to_json(self.kwargs)},
                "returns": schema(self.returns)}

    async def compute(self, key: str) -> Any:
        value = self.fn(*self.args, **self.kwargs)
        return await value if inspect.isawaitable(value) else value


def step(fn: Callable[..., Any], *args: Any, key: str | None = None, returns: Any = None,
         **kwargs: Any) -> StepCall:
    """Deterministic local Python, memoised: ``fn(*args, **kwargs)`` once per run and key."""
    return StepCall(fn, args, kwargs, key, returns)


async def _gather(calls: Sequence[Callable[[], Awaitable[Any]]], limit: int | None,
                  fail_fast: bool, group: str | None) -> list[Any]:
    """Start every call (at most ``limit`` at once), results in input order.

    A call that waits for an answer (``Suspend``) does not stop the others: they go on until
    they finish or wait too, so every question of the fan-out is asked at once.
    """
    gate = asyncio.Semaphore(limit) if limit else asyncio.Semaphore(len(calls) or 1)

    async def guarded(call: Callable[[], Awaitable[Any]]) -> Any:
        async with gate:
            if group is None:
                return await call()
            with member_of(group):
                return await call()

    tasks = [asyncio.ensure_future(guarded(call)) for call in calls]
    try:
        pending = set(tasks)
        while pending:
            finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_EXCEPTION)
            failed = [t.exception() for t in tasks if t in finished and not t.cancelled()
                      and t.exception() is not None and not isinstance(t.exception(), Suspend)]
            if fail_fast and failed:
                raise failed[0]  # type: ignore[misc]
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    results = [task.exception() or task.result() if not task.cancelled()
               else asyncio.CancelledError() for task in tasks]
    # refusing, cancelling or waiting is never "a failure to collect"
    for signal in (FingerprintMismatch, asyncio.CancelledError, Suspend):
        if raised := [r for r in results if isinstance(r, signal)]:
            raise raised[0]
    return results


def _starter(call: Child) -> Callable[[], Awaitable[Any]]:
    if isinstance(call, FlowCall):
        return call.run
    if callable(call):
        return call

    async def started() -> Any:
        return await call
    return started


def _group_name(calls: Sequence[Child]) -> str:
    names = list(dict.fromkeys(c.name for c in calls if isinstance(c, FlowCall)))
    return "parallel " + "+".join(names) if names else "parallel"


async def parallel(calls: Iterable[Child], *, limit: int | None = None,
                   fail_fast: bool = True, name: str | None = None) -> list[Any]:
    """Run calls (``agent(...)``, ``step(...)``, awaitables or zero-argument functions) at once,
    recorded as one fan-out group called ``name`` (default: from the calls' names).

    At most ``limit`` run at a time; results come in input order. ``fail_fast`` (default)
    cancels the others at the first failure and raises it; ``fail_fast=False`` waits for all
    and puts each failure's exception in its place.
    """
    run, children = current(), list(calls)
    group = scoped(name or _group_name(children))
    keys = [scoped(c.key) for c in children if isinstance(c, FlowCall)]
    run.shape(group, "parallel", {"children": keys})
    return await _gather([_starter(c) for c in children], limit, fail_fast, group)


def _made(stage: Stage, value: Any) -> FlowCall[Any] | Awaitable[Any] | None:
    """What a stage makes of ``value``: a call, an awaitable, or None (an async function:
    called only when the cell runs)."""
    if isinstance(stage, AgentCall):
        return stage.given(value)
    if isinstance(stage, FlowCall):
        raise FlowError(f"a {stage.kind} call cannot be a pipeline stage as it is: write "
                        f"lambda item: {stage.kind}(..., input=item)")
    if inspect.iscoroutinefunction(stage):
        return None
    made = stage(value)
    if not inspect.isawaitable(made):
        raise FlowError(f"pipeline stage {getattr(stage, '__name__', stage)!r} returned a "
                        f"{type(made).__name__}: a stage returns a call or an awaitable")
    return made


def _stage_name(stage: Stage, n: int, sample: list[Any]) -> str:
    """An agent stage's name, a function's name, else the name of the call it makes."""
    if isinstance(stage, FlowCall):
        return stage.name
    name = str(getattr(stage, "__name__", ""))
    if name and name != "<lambda>":
        return name
    made = _made(stage, sample[0]) if sample else None
    if inspect.iscoroutine(made):
        made.close()
    return made.name if isinstance(made, FlowCall) else f"stage{n}"


async def pipeline(items: Iterable[Any], *stages: Stage, limit: int | None = None,
                   name: str | None = None, key_by: Callable[[Any], Any] | None = None,
                   fail_fast: bool = True) -> list[Any]:
    """Every item through the stages in order (each stage gets the previous one's output).

    Each (item, stage) cell is recorded, so a continued run skips finished cells and starts
    at the first unfinished stage of each item. At most ``limit`` items are in flight; an
    item's key is ``key_by(item)`` (default: the item itself, or a hash of it).
    """
    run, values = current(), list(items)
    stage_names = [_stage_name(stage, n, values) for n, stage in enumerate(stages, 1)]
    relative = name or "+".join(stage_names)
    labels = [label(key_by(item) if key_by else item) for item in values]
    if len(set(labels)) != len(labels) or len(set(stage_names)) != len(stage_names):
        raise FlowError(f"pipeline {relative!r}: two items (or stages) share a key; pass "
                        "key_by=... (or name the stage functions apart)")
    full = scoped(relative)
    run.shape(full, "pipeline", {"items": labels, "stages": stage_names})

    async def cell(stage: Stage, stage_name: str, item: str, value: Any) -> Any:
        key, where = f"{relative}/{item}/{stage_name}", (full, item, stage_name)
        made = _made(stage, value)
        if isinstance(made, FlowCall):
            return await run.memo(key, "cell", made.parts(), made.returns, made.compute, where)
        assert not isinstance(stage, FlowCall)  # a call stage made a call above
        kind = _return_type(stage)

        async def compute(_: str) -> Any:
            return await (made if made is not None else stage(value))

        try:
            return await run.memo(key, "cell", {"input": to_json(value), "returns": schema(kind),
                                                "code": code_text(stage)}, kind, compute, where)
        finally:
            if inspect.iscoroutine(made) and inspect.getcoroutinestate(made) == "CORO_CREATED":
                made.close()  # a finished cell: its stage was not needed

    async def through(item: str, value: Any) -> Any:
        for stage_name, stage in zip(stage_names, stages, strict=True):
            value = await cell(stage, stage_name, item, value)
        return value

    def start(item: str, value: Any) -> Callable[[], Awaitable[Any]]:
        return lambda: through(item, value)

    return await _gather([start(lb, v) for lb, v in zip(labels, values, strict=True)],
                         limit, fail_fast, None)

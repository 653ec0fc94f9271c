"""Node factories and router helpers: small building blocks that workflows wire into a Graph.

``tool_node`` wraps a plain function, ``human_node`` asks a person and parks the run until
``resume`` brings the answer (or the wait expires), and ``route_on`` / ``route_when`` build
routers from the state. ``llm_node`` and ``agent_node`` (model calls) live in
``graphs.agent_nodes`` and are re-exported here.

Usage::

    graph.add_node(Node("check_length", tool_node(count_words, ["draft"], "length")))
    graph.add_node(human_node("Publish this draft?", "decision", ["Approve", "Discard"],
                              expires_after=3600, on_expiry="discard", name="approval"))
    graph.add_router("approval", route_on("decision"), {"Approve": "save", "Discard": END})
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from graphs.agent_nodes import agent_node, llm_node
from graphs.events import RunContext
from graphs.graph import END, GraphState, Node, NodeFn, RouteFn, Suspend

__all__ = ["WaitExpired", "agent_node", "human_node", "llm_node", "route_on", "route_when",
           "tool_node"]

Text = str | Callable[[GraphState], str]


class WaitExpired(Exception):
    """Nobody answered a human node in time; the run follows the node's ``on_expiry``."""


def tool_node(fn: Callable[..., Any], in_keys: Sequence[str] | Mapping[str, str],
              out_key: str) -> NodeFn:
    """A node calling ``fn`` with state keys as arguments (a mapping renames: param -> key)."""
    params = dict(in_keys) if isinstance(in_keys, Mapping) else {k: k for k in in_keys}
    is_async = inspect.iscoroutinefunction(fn)

    async def node(state: GraphState) -> dict[str, Any]:
        result = fn(**{param: state[key] for param, key in params.items()})
        return {out_key: await result if is_async else result}

    node.__name__ = getattr(fn, "__name__", "tool")
    return node


def human_node(question: Text, out_key: str, options: Sequence[str] | None = None,
               expires_after: float | None = None, on_expiry: str = END, *,
               name: str | None = None, max_visits: int = 1) -> Node:
    """Ask a person ``question``; the run waits until ``resume`` brings the answer.

    The answer is written to ``out_key`` (who gave it to ``<out_key>_by``). ``expires_after``
    is the person's time to answer, in seconds; once ``expire_due`` finds the wait past it, the
    run goes to ``on_expiry`` with ``state["errors"][name]`` saying it expired.
    """

    async def ask(state: GraphState, context: RunContext) -> dict[str, Any]:
        answer = context.resume_value(None)
        if answer is None:
            text = question(state) if callable(question) else question
            expires_at = None if expires_after is None else time.time() + expires_after
            raise Suspend(question=text, options=list(options or []), expires_at=expires_at)
        if answer.get("expired"):  # ``expire_due`` resumes an overdue wait this way
            raise WaitExpired(f"no answer within {expires_after}s")
        return {out_key: answer.get("answer"), f"{out_key}_by": answer.get("by")}

    return Node(name or out_key, ask, max_visits=max_visits, on_error=on_expiry)


def route_on(key: str, default: str | None = None) -> RouteFn:
    """A router reading the label from ``state[key]`` (``default`` when missing or empty)."""

    def route(state: GraphState) -> str:
        value = state.get(key)
        if value is None or value == "":
            if default is None:
                raise KeyError(f"route_on({key!r}): the state has no {key!r}")
            return default
        return str(value)

    return route


def route_when(rules: Sequence[tuple[Callable[[GraphState], bool], str]],
               default: str) -> RouteFn:
    """A router returning the label of the first rule whose predicate holds, else ``default``."""

    def route(state: GraphState) -> str:
        return next((label for test, label in rules if test(state)), default)

    return route

"""The agent loop: the model picks tools until it answers, or a named stop condition ends it.

The same loop runs with graph mode off and inside the triage graph's ``full_agent`` node.
Tool failures and refusals go back to the model as observations. At most
``MAX_CALLS_PER_TURN`` tool calls of one model reply are run; each one past that is answered
as refused (a ``tool_call`` event with ``refused: too_many_calls``), so a reply asking for
fifty reminders sets eight. The loop stops for one of
``STOP_REASONS``, named in a ``loop_end`` event: a final answer, ``max_iterations`` turns,
``max_seconds`` of time, turns with no valid action (only unknown tools, refused tools or
arguments that do not fit), or a critical failure (the model failed). ``model_call``,
``tool_call`` and ``loop_end`` events go to the observer passed in, else to the node's of the
run ``context`` passed in (``graphs.events.RunContext``).

Inside a durable run (a ``context`` of one) each model turn and each tool call is a step
(``graphs.checkpoints``):
recorded as it completes, replayed when the node runs again after a crash, so a tool that ran
is not run again; a call in flight at the crash runs again under the same ``effect_key``,
which effectful tools use to do their effect once. A call that needs the owner's approval
(an MCP tool with side effects) waits for it durably first (``bot.tools.approval``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from bot.models.base import (
    Message,
    Model,
    ModelError,
    Observer,
    Reply,
    Stopwatch,
    TextSink,
    ToolCall,
    Usage,
    as_messages,
    emit,
)
from bot.tools.approval import approved_call
from bot.tools.registry import Caller, ToolRegistry, ToolResult
from graphs import EventKind
from graphs.checkpoints import NodeSteps, node_steps
from graphs.events import RunContext

StopReason = Literal["final_answer", "max_iterations", "max_time", "no_valid_action",
                     "critical_failure"]
STOP_REASONS: tuple[StopReason, ...] = ("final_answer", "max_iterations", "max_time",
                                        "no_valid_action", "critical_failure")
INVALID_TURNS = 2  # turns in a row with no valid action before the loop gives up
MAX_CALLS_PER_TURN = 8  # tool calls run from one model reply; the rest are refused


def too_many_calls_text(limit: int) -> str:
    """The observation for a call past the per-turn cap."""
    return (f"Not run: at most {limit} tool calls are run from one reply. Ask for the rest "
            "in your next reply if they are still needed.")


@dataclass
class LoopResult:
    """The final answer, the whole conversation, and what the run took."""

    text: str
    messages: list[Message]
    iterations: int
    cost_usd: float = 0.0
    tool_calls: int = 0
    refused_calls: int = 0  # calls past MAX_CALLS_PER_TURN, answered without running
    error: str | None = None
    stopped: bool = False  # True when a limit (not an answer or a failure) ended the loop
    stop_reason: StopReason = "final_answer"
    providers: list[str] = field(default_factory=list)


def stopped_text(max_iterations: int) -> str:
    """The clear final answer when the loop runs out of turns."""
    return (f"I stopped after {max_iterations} steps without finishing; "
            "please ask again more specifically.")


STOPPED = {"max_time": "I ran out of time before finishing; please try again.",
           "no_valid_action": "I couldn't find a way to do that with the tools I have."}


async def run_loop(model: Model, messages: Sequence[Message | Mapping[str, Any]],
                   tools: ToolRegistry, caller: Caller, *, max_iterations: int = 8,
                   observer: Observer | None = None, max_tokens: int = 1024,
                   purpose: str = "agent", max_seconds: float | None = None,
                   on_text: TextSink | None = None,
                   context: RunContext | None = None) -> LoopResult:
    """Alternate model turns and tool runs until the model answers or a stop condition.

    ``on_text`` (``graphs.live``): each turn may be the final answer, so each is streamed
    to it; a turn that asks for tools takes back what it showed (tool turns are not shown).
    ``context``: the run context of the node the loop runs in (its steps, its observer, the
    answer it was woken with); None outside a run.
    """
    sink = observer if observer is not None or context is None else context.observer()
    steps = node_steps(context)
    conversation = as_messages(messages)
    specs = tools.specs_for(caller)
    result = LoopResult(text="", messages=conversation, iterations=0)
    ends_at = None if max_seconds is None else time.monotonic() + max_seconds
    invalid_turns = 0
    while True:
        if result.iterations >= max_iterations:
            return _stop(result, sink, "max_iterations", stopped_text(max_iterations))
        if ends_at is not None and time.monotonic() >= ends_at:
            return _stop(result, sink, "max_time", STOPPED["max_time"])
        result.iterations += 1
        try:
            reply = await _turn(model, conversation, specs, max_tokens, purpose, sink, steps,
                                result.iterations, on_text)
        except ModelError as exc:
            result.error = exc.user_message
            return _stop(result, sink, "critical_failure", exc.user_message)
        result.cost_usd += reply.cost_usd
        result.providers.append(reply.provider)
        conversation.append(Message("assistant", reply.text, tool_calls=list(reply.tool_calls)))
        if not reply.tool_calls:
            return _stop(result, sink, "final_answer", reply.text)
        if on_text is not None:
            on_text("")  # not the answer: a turn that asks for tools is not shown
        valid = False
        for call in reply.tool_calls[:MAX_CALLS_PER_TURN]:
            outcome = await _tool(tools, call, caller, sink, steps, result.iterations)
            result.tool_calls += 1
            valid = valid or outcome.valid
            conversation.append(Message("tool", outcome.text, tool_call_id=call.id))
        for call in reply.tool_calls[MAX_CALLS_PER_TURN:]:  # each call gets its answer
            result.refused_calls += 1
            emit(sink, {"event": EventKind.TOOL_CALL, "tool": call.name,
                        "arguments": tools.describe_arguments(call.arguments), "ok": False,
                        "refused": "too_many_calls", "duration_s": 0.0})
            conversation.append(Message("tool", too_many_calls_text(MAX_CALLS_PER_TURN),
                                        tool_call_id=call.id))
        invalid_turns = 0 if valid else invalid_turns + 1
        if invalid_turns >= INVALID_TURNS:
            return _stop(result, sink, "no_valid_action", STOPPED["no_valid_action"])


def _stop(result: LoopResult, sink: Observer | None, reason: StopReason,
          text: str) -> LoopResult:
    result.text, result.stop_reason = text, reason
    result.stopped = reason in ("max_iterations", "max_time", "no_valid_action")
    emit(sink, {"event": EventKind.LOOP_END, "stop_reason": reason,
                "iterations": result.iterations, "tool_calls": result.tool_calls,
                "refused_calls": result.refused_calls})
    return result


async def _turn(model: Model, conversation: list[Message], specs: Any, max_tokens: int,
                purpose: str, sink: Observer | None, steps: NodeSteps | None,
                number: int, on_text: TextSink | None = None) -> Reply:
    """One model turn: replayed from its step when a crash came after it, else asked
    (streamed to ``on_text`` when given)."""
    key = f"turn:{number}"
    saved = steps.saved(key) if steps is not None else None
    if saved is not None and saved.status == "done":
        return _reply_from(saved.output)
    streamed: dict[str, Any] = {"on_text": on_text} if on_text is not None else {}
    reply = await model.complete(conversation, tools=specs or None, max_tokens=max_tokens,
                                 purpose=purpose, observer=sink, **streamed)
    if steps is not None:
        steps.save(key, "model_turn", _reply_json(reply))
    return reply


async def _tool(tools: ToolRegistry, call: ToolCall, caller: Caller, sink: Observer | None,
                steps: NodeSteps | None, turn: int) -> ToolResult:
    """One tool call, after the owner's approval when it needs one (``bot.tools.approval``)."""
    key = f"tool:{turn}:{call.id}"  # a model may reuse ids from turn to turn
    watch = Stopwatch()

    async def run_once(step_key: str) -> ToolResult:
        return await _run_once(tools, call, caller, steps, step_key)

    if tools.needs_approval(call.name, caller):
        outcome = await approved_call(tools, call, caller, steps, key, run_once)
    else:
        outcome = await run_once(key)
    emit(sink, {"event": EventKind.TOOL_CALL, "tool": call.name,
                "arguments": tools.describe_arguments(call.arguments), "ok": outcome.ok,
                "duration_s": watch.elapsed()})
    return outcome


async def _run_once(tools: ToolRegistry, call: ToolCall, caller: Caller,
                    steps: NodeSteps | None, key: str) -> ToolResult:
    """Its recorded result after a crash, else run it (recorded before and after)."""
    if steps is not None:
        saved = steps.saved(key)
        if saved is not None and saved.status == "done":
            return ToolResult(str(saved.output["text"]), bool(saved.output["ok"]),
                              bool(saved.output.get("valid", True)))
        steps.begin(key, "tool_call")
        caller = replace(caller, effect_key=steps.effect_key(key))
    outcome = await tools.invoke(call.name, call.arguments, caller)
    if steps is not None:
        steps.done(key, {"text": outcome.text, "ok": outcome.ok, "valid": outcome.valid})
    return outcome


def _reply_json(reply: Reply) -> dict[str, Any]:
    return {"text": reply.text, "model": reply.model, "provider": reply.provider,
            "cost_usd": reply.cost_usd, "usage": [reply.usage.input_tokens,
                                                  reply.usage.output_tokens],
            "tool_calls": [[c.id, c.name, c.arguments] for c in reply.tool_calls]}


def _reply_from(data: dict[str, Any]) -> Reply:
    """A recorded turn as it was answered (its cost was counted when it was made)."""
    return Reply(str(data["text"]), [ToolCall(str(i), str(n), dict(a))
                                     for i, n, a in data["tool_calls"]],
                 Usage(*data["usage"]), str(data["model"]), str(data["provider"]), 0.0)

"""The agent loop: the model picks tools until it answers or ``max_iterations`` is reached.

The same loop runs with graph mode off and inside the triage graph's ``full_agent`` node.
Tool failures and refusals go back to the model as observations; a model failure ends the
loop with its one-sentence message. ``model_call`` and ``tool_call`` events go to the observer
passed in, else to the current graph node's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bot.models.base import (
    Message,
    Model,
    ModelError,
    Observer,
    Stopwatch,
    as_messages,
    emit,
    resolve_observer,
)
from bot.tools import Caller, ToolRegistry


@dataclass
class LoopResult:
    """The final answer, the whole conversation, and what the run took."""

    text: str
    messages: list[Message]
    iterations: int
    cost_usd: float = 0.0
    tool_calls: int = 0
    error: str | None = None
    stopped: bool = False  # True when max_iterations ended the loop
    providers: list[str] = field(default_factory=list)


def stopped_text(max_iterations: int) -> str:
    """The clear final answer when the loop runs out of turns."""
    return (f"I stopped after {max_iterations} steps without finishing; "
            "please ask again more specifically.")


async def run_loop(model: Model, messages: Sequence[Message | Mapping[str, Any]],
                   tools: ToolRegistry, caller: Caller, *, max_iterations: int = 8,
                   observer: Observer | None = None, max_tokens: int = 1024,
                   purpose: str = "agent") -> LoopResult:
    """Alternate model turns and tool runs until the model answers without calling a tool."""
    sink = resolve_observer(observer)
    conversation = as_messages(messages)
    specs = tools.specs_for(caller)
    result = LoopResult(text="", messages=conversation, iterations=0)
    while result.iterations < max_iterations:
        result.iterations += 1
        try:
            reply = await model.complete(conversation, tools=specs or None,
                                         max_tokens=max_tokens, purpose=purpose, observer=sink)
        except ModelError as exc:
            result.text = result.error = exc.user_message
            return result
        result.cost_usd += reply.cost_usd
        result.providers.append(reply.provider)
        conversation.append(Message("assistant", reply.text, tool_calls=list(reply.tool_calls)))
        if not reply.tool_calls:
            result.text = reply.text
            return result
        for call in reply.tool_calls:
            watch = Stopwatch()
            outcome = await tools.invoke(call.name, call.arguments, caller)
            result.tool_calls += 1
            emit(sink, {"event": "tool_call", "tool": call.name,
                        "arguments": tools.describe_arguments(call.arguments),
                        "ok": outcome.ok, "duration_s": watch.elapsed()})
            conversation.append(Message("tool", outcome.text, tool_call_id=call.id))
    result.text = stopped_text(max_iterations)
    result.stopped = True
    return result

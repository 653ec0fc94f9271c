"""Node factories that talk to a model: ``llm_node`` (one call) and ``agent_node`` (the tool loop).

They take the model, the loop and the tool registry as arguments, typed by the protocols of
``graphs.protocols``, so ``graphs/`` never imports ``bot/``. Messages are plain mappings
(``{"role": "user", "content": ...}``), which the bot's models accept. Each node takes its run
context: the model and the loop send their events to the node's observer, the model is the
one the run's chat chose, and the loop keeps its steps in the node's visit.

Usage::

    classify = llm_node(models.small, prompt=lambda s: s["text"], output_key="intent",
                        purpose="classify", parse=lambda reply, s: parse_intent(reply, s["text"]))
    answer = agent_node(run_loop, models.big, registry, caller=lambda s: s["caller"],
                        prompt=lambda s: s["text"], output_key="answer")
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphs.events import RunContext
from graphs.graph import GraphState, NodeFn
from graphs.protocols import AgentLoop, ChatModel

Prompt = Callable[[GraphState], "str | list[dict[str, Any]]"]


def build_messages(state: GraphState, prompt: Prompt, system: str | None) -> list[dict[str, Any]]:
    """A system message (if any) and the prompt, as plain message mappings."""
    built = prompt(state)
    turns = [{"role": "user", "content": built}] if isinstance(built, str) else list(built)
    return ([{"role": "system", "content": system}] if system else []) + turns


def llm_node(model: ChatModel, *, prompt: Prompt, output_key: str, purpose: str,
             system: str | None = None, max_tokens: int = 1024,
             parse: Callable[[str, GraphState], Any] | None = None) -> NodeFn:
    """A node that makes one model call and writes its (parsed) text to ``output_key``."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        reply = await context.model(model).complete(build_messages(state, prompt, system),
                                                    max_tokens=max_tokens, purpose=purpose,
                                                    observer=context.observer())
        return {output_key: parse(reply.text, state) if parse else reply.text}

    node.__name__ = f"llm_{output_key}"
    return node


def agent_node(loop: AgentLoop, model: Any, tools: Any, *, caller: Callable[[GraphState], Any],
               prompt: Prompt, output_key: str, system: str | None = None,
               max_iterations: int = 8, live: bool = False) -> NodeFn:
    """A node that runs the tool loop for the state's caller and writes the final answer;
    ``live``: that answer is the run's reply, streamed to the run's live sink as it is written."""

    async def node(state: GraphState, context: RunContext) -> dict[str, Any]:
        result = await loop(context.model(model), build_messages(state, prompt, system), tools,
                            caller(state), max_iterations=max_iterations,
                            observer=context.observer(),
                            on_text=context.live_text() if live else None, context=context)
        return {output_key: result.text}

    node.__name__ = f"agent_{output_key}"
    return node

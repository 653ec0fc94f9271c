"""Node factories that talk to a model: ``llm_node`` (one call) and ``agent_node`` (the tool loop).

They take the model, the loop and the tool registry as arguments, typed by the small
protocols below, so ``graphs/`` never imports ``bot/``. Messages are plain mappings
(``{"role": "user", "content": ...}``), which the bot's models accept. Events need no wiring:
inside a node, the model and the loop send theirs to the node's observer.

Usage::

    classify = llm_node(models.small, prompt=lambda s: s["text"], output_key="intent",
                        purpose="classify", parse=lambda reply, s: parse_intent(reply, s["text"]))
    answer = agent_node(run_loop, models.big, registry, caller=lambda s: s["caller"],
                        prompt=lambda s: s["text"], output_key="answer")
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Protocol

State = dict[str, Any]
Prompt = Callable[[State], "str | list[dict[str, Any]]"]
NodeFn = Callable[[State], Awaitable[dict[str, Any]]]


class HasText(Protocol):
    """What a node reads from a model reply or a loop result."""

    @property
    def text(self) -> str: ...


class ChatModel(Protocol):
    """A model: ``bot.models.Model`` satisfies this."""

    async def complete(self, messages: list[dict[str, Any]], *, max_tokens: int = 1024,
                       purpose: str | None = None) -> HasText: ...


class AgentLoop(Protocol):
    """The tool loop: ``bot.agent.run_loop`` satisfies this."""

    def __call__(self, model: Any, messages: list[dict[str, Any]], tools: Any, caller: Any, *,
                 max_iterations: int = 8, purpose: str = "agent") -> Awaitable[HasText]: ...


def build_messages(state: State, prompt: Prompt, system: str | None) -> list[dict[str, Any]]:
    """A system message (if any) and the prompt, as plain message mappings."""
    built = prompt(state)
    turns = [{"role": "user", "content": built}] if isinstance(built, str) else list(built)
    return ([{"role": "system", "content": system}] if system else []) + turns


def llm_node(model: ChatModel, *, prompt: Prompt, output_key: str, purpose: str,
             system: str | None = None, max_tokens: int = 1024,
             parse: Callable[[str, State], Any] | None = None) -> NodeFn:
    """A node that makes one model call and writes its (parsed) text to ``output_key``."""

    async def node(state: State) -> dict[str, Any]:
        reply = await model.complete(build_messages(state, prompt, system),
                                     max_tokens=max_tokens, purpose=purpose)
        return {output_key: parse(reply.text, state) if parse else reply.text}

    node.__name__ = f"llm_{output_key}"
    return node


def agent_node(loop: AgentLoop, model: Any, tools: Any, *, caller: Callable[[State], Any],
               prompt: Prompt, output_key: str, system: str | None = None,
               max_iterations: int = 8) -> NodeFn:
    """A node that runs the tool loop for the state's caller and writes the final answer."""

    async def node(state: State) -> dict[str, Any]:
        result = await loop(model, build_messages(state, prompt, system), tools, caller(state),
                            max_iterations=max_iterations)
        return {output_key: result.text}

    node.__name__ = f"agent_{output_key}"
    return node

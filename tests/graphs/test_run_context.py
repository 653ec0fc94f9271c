"""The run context is explicit: what a node needs comes in its ``RunContext`` (how few context
variables are left in product code is pinned in ``tests/test_layout.py``)."""

from __future__ import annotations

from typing import Any

from graphs import END, START, Graph, Node, RunContext, run_graph
from graphs.protocols import chosen_model


async def test_a_node_gets_its_run_id_meta_visit_resume_value_and_live_sink() -> None:
    seen: dict[str, Any] = {}
    shown: list[str] = []

    async def answer(state: dict[str, Any], context: RunContext) -> dict[str, Any]:
        seen.update(run_id=context.run_id, chat=context.chat, node=context.node,
                    visit=context.visit, resumed=context.resume_value("none"))
        sink = context.live_text()
        assert sink is not None
        sink("Hello")
        return {"reply": "Hello"}

    graph = Graph("one")
    graph.add_node(Node("answer", answer))
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    result = await run_graph(graph, {}, observer=lambda event: None, run_id="r-1",
                             meta={"platform": "telegram", "chat_id": "42"},
                             live=shown.append)
    assert result["reply"] == "Hello" and shown == ["Hello"]
    assert seen == {"run_id": "r-1", "chat": ("telegram", "42"), "node": "answer", "visit": 1,
                    "resumed": "none"}


async def test_a_node_of_state_alone_is_called_without_a_context() -> None:
    graph = Graph("plain")
    graph.add_node(Node("plain", lambda state: {"seen": len(state)}))
    graph.add_edge(START, "plain")
    assert not graph.nodes["plain"].takes_context
    assert (await run_graph(graph, {"a": 1}))["seen"] == 1


class PerChat:
    """A model that is, per chat, the chat's choice."""

    name = "default"

    def model_for(self, platform: str, chat_id: str) -> str:
        return f"{platform}:{chat_id}"


def test_the_chats_model_is_the_runs_chats_choice_and_any_other_model_is_itself() -> None:
    assert chosen_model(PerChat(), ("discord", "7")) == "discord:7"
    model = PerChat()
    assert chosen_model(model, None) is model
    plain = object()
    assert chosen_model(plain, ("discord", "7")) is plain

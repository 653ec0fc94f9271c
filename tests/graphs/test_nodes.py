"""Node factories, router helpers and the Mermaid export."""

from __future__ import annotations

from typing import Any

import pytest

from graphs import END, START, Graph, GraphBuildError, Node, run_graph
from graphs.mermaid import to_mermaid
from graphs.nodes import route_on, route_when, tool_node


async def test_tool_node_calls_the_function_with_state_keys() -> None:
    async def add(a: int, b: int) -> int:
        return a + b

    graph = Graph()
    graph.add_node(Node("words", tool_node(lambda text: len(text.split()), ["text"], "n")))
    graph.add_node(Node("sum", tool_node(add, {"a": "n", "b": "extra"}, "total")))
    graph.add_edge(START, "words")
    graph.add_edge("words", "sum")
    result = await run_graph(graph, {"text": "one two three", "extra": 10})
    assert (result["n"], result["total"]) == (3, 13)


def test_route_on_reads_a_key_with_a_default() -> None:
    route = route_on("intent", default="question")
    assert route({"intent": "social"}) == "social"
    assert route({}) == "question"
    with pytest.raises(KeyError, match="intent"):
        route_on("intent")({})


def test_route_when_takes_the_first_rule_that_holds() -> None:
    def urgent(state: dict[str, Any]) -> bool:
        return bool(state["urgency"] >= 0.8)

    route = route_when([(urgent, "notify"), (lambda s: s["intent"] == "social", "quick")],
                       default="agent")
    assert route({"urgency": 0.9, "intent": "social"}) == "notify"
    assert route({"urgency": 0.1, "intent": "social"}) == "quick"
    assert route({"urgency": 0.1, "intent": "task"}) == "agent"


def test_mermaid_shows_every_edge_kind() -> None:
    graph = Graph("demo")
    for name in ("classify", "reply", "apology", "end"):
        graph.add_node(Node(name, lambda s: {}, on_error="apology" if name == "reply" else None))
    graph.add_edge(START, "classify")
    graph.add_router("classify", lambda s: "x", {"social": "reply", "other": END})
    graph.add_edge("reply", "end")
    text = to_mermaid(graph)
    assert text.startswith("flowchart TD\n")
    assert "graph_start --> n_classify" in text
    assert 'n_classify -.->|"social"| n_reply' in text
    assert 'n_classify -.->|"other"| graph_end' in text
    assert 'n_reply -.->|"on error"| n_apology' in text
    assert "n_reply --> n_end" in text  # a node named "end" doesn't clash with Mermaid's keyword


def test_mermaid_refuses_a_broken_graph() -> None:
    graph = Graph()
    graph.add_edge(START, "ghost")
    with pytest.raises(GraphBuildError):
        to_mermaid(graph)

"""llm_node and agent_node: model calls as graph nodes; their events reach the graph's observer."""

from __future__ import annotations

from typing import Any

from bot.models import OfflineModel, parse_intent
from bot.tools.loop import run_loop
from graphs import END, START, Graph, Node, RunContext, run_graph
from graphs.agent_nodes import agent_node, llm_node
from tests.fakes.model import FakeModel
from tests.support.models import GUEST, OWNER, Events, contract_tools


async def test_llm_node_sends_system_and_prompt_and_parses_the_reply() -> None:
    model = FakeModel()
    model.enqueue(text='{"intent": "task", "urgency": 0.5}')
    node = llm_node(model, prompt=lambda s: s["text"], output_key="intent", purpose="classify",
                    system="Classify the message.",
                    parse=lambda reply, s: list(parse_intent(reply, s["text"])))
    assert await node({"text": "book a table"}, RunContext.outside()) == {
        "intent": ["task", 0.5]}
    [call] = model.history
    assert [(m.role, m.content) for m in call.messages] == [
        ("system", "Classify the message."), ("user", "book a table")]
    assert call.purpose == "classify"


async def test_agent_node_runs_the_loop_for_the_states_caller() -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    node = agent_node(run_loop, OfflineModel(role="big"), contract_tools(calls),
                      caller=lambda s: s["caller"], prompt=lambda s: s["text"],
                      output_key="answer", max_iterations=4)
    out = await node({"text": "where is my passport?", "caller": GUEST}, RunContext.outside())
    assert calls == [("search_notes", {"query": "where is my passport?", "scope": "telegram:7"})]
    assert out["answer"].startswith("From your notes:")


async def test_model_and_tool_events_pass_through_the_graph_with_the_node_name() -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    graph = Graph("mini")
    graph.add_node(Node("classify", llm_node(
        OfflineModel(), prompt=lambda s: s["text"], output_key="intent", purpose="classify",
        parse=lambda reply, s: parse_intent(reply, s["text"])[0])))
    graph.add_node(Node("full_agent", agent_node(
        run_loop, OfflineModel(role="big"), contract_tools(calls),
        caller=lambda s: OWNER, prompt=lambda s: s["text"], output_key="answer")))
    graph.add_edge(START, "classify")
    graph.add_edge("classify", "full_agent")
    graph.add_edge("full_agent", END)
    events = Events()
    state = await run_graph(graph, {"text": "remember to water the plants"},
                            observer=events.append)
    assert state["intent"] == "task"
    assert state["answer"].startswith("Saved to your notes: to water the plants")
    inner: list[Any] = [(e["event"], e["node"], e.get("purpose") or e.get("tool"))
                        for e in events if e["event"] in ("model_call", "tool_call")]
    assert inner == [("model_call", "classify", "classify"),
                     ("model_call", "full_agent", "agent"),
                     ("tool_call", "full_agent", "remember"),
                     ("model_call", "full_agent", "agent")]

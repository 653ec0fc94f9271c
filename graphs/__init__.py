"""Frontdesk's graph engine, node factories, durable runs and workflows; imports nothing from
``bot/`` or ``memory/``. The vocabulary is ``graphs.graph``, the run loop ``graphs.engine``,
the durable run ``graphs.runs``."""

from graphs.engine import continue_graph, run_graph
from graphs.events import EventKind, RunContext
from graphs.graph import (
    END,
    START,
    Graph,
    GraphBuildError,
    GraphRunError,
    GraphState,
    Node,
    NodeFn,
    Observer,
    RetryPolicy,
    RouteFn,
    RunResult,
    RunStatus,
    Suspend,
    is_transient,
)
from graphs.mermaid import to_mermaid
from graphs.nodes import (
    WaitExpired,
    agent_node,
    human_node,
    llm_node,
    route_on,
    route_when,
    tool_node,
)
from graphs.protocols import AgentLoop, ChatModel, parse_json_object
from graphs.runs import GraphWorkflow, Registry, RunInfo, RunRecord, Runs, RunStore, WaitInfo
from graphs.trace import JsonlTrace, cost_totals, node_statuses

__all__ = [
    "END", "START", "AgentLoop", "ChatModel", "EventKind", "Graph", "GraphBuildError",
    "GraphRunError", "GraphState", "GraphWorkflow", "JsonlTrace", "Node", "NodeFn", "Observer",
    "Registry", "RetryPolicy", "RouteFn", "RunContext", "RunInfo", "RunRecord", "RunResult",
    "RunStatus", "RunStore",
    "Runs", "Suspend", "WaitExpired", "WaitInfo", "agent_node", "continue_graph", "cost_totals",
    "human_node", "is_transient", "llm_node", "node_statuses",
    "parse_json_object", "route_on", "route_when", "run_graph", "to_mermaid",
    "tool_node",
]

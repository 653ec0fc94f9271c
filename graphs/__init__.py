"""Frontdesk's graph engine, node factories and workflows; imports nothing from `bot/`."""

from graphs.durable import cancel, expire_due, load, recover, resume
from graphs.engine import node_observer, resume_value, run_graph
from graphs.graph import (
    END,
    START,
    Graph,
    GraphBuildError,
    GraphRunError,
    GraphState,
    Node,
    Observer,
    RetryPolicy,
    RunResult,
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
from graphs.store import RunInfo, RunStore, WaitInfo
from graphs.trace import JsonlTrace, node_statuses

__all__ = [
    "END", "START", "Graph", "GraphBuildError", "GraphRunError", "GraphState", "JsonlTrace",
    "Node", "Observer", "RetryPolicy", "RunInfo", "RunResult", "RunStore", "Suspend",
    "WaitExpired", "WaitInfo", "agent_node", "cancel", "expire_due", "human_node",
    "is_transient", "llm_node", "load", "node_observer", "node_statuses", "recover", "resume",
    "resume_value", "route_on", "route_when", "run_graph", "to_mermaid", "tool_node",
]

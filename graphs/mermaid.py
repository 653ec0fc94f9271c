"""Export a graph as a Mermaid flowchart: plain edges solid, router and on_error edges dotted."""

from __future__ import annotations

import re

from graphs.graph import END, START, Graph


def _id(name: str) -> str:
    # "end" is a Mermaid keyword, hence the prefixes
    return {START: "graph_start", END: "graph_end"}.get(name) or "n_" + re.sub(r"\W", "_", name)


def to_mermaid(graph: Graph) -> str:
    """The graph as Mermaid ``flowchart TD`` text (checked first: a broken graph raises)."""
    graph.compiled()
    lines = ["flowchart TD", "    graph_start([START])", "    graph_end([END])"]
    lines += [f'    {_id(name)}["{name}"]' for name in graph.nodes]
    for src, targets in graph.edges.items():
        lines += [f"    {_id(src)} --> {_id(dst)}" for dst in targets]
    for src, (_, table) in graph.routers.items():
        lines += [f'    {_id(src)} -.->|"{label}"| {_id(dst)}' for label, dst in table.items()]
    for name, node in graph.nodes.items():
        if node.on_error:
            lines.append(f'    {_id(name)} -.->|"on error"| {_id(node.on_error)}')
    return "\n".join(lines) + "\n"

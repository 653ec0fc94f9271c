"""Draw a workflow graph as SVG, top down, with the path one run took highlighted.

Mermaid would need a browser bundle from the network, so the layout is done here: each node's
layer is its longest forward path from START; edges that lead back up a cycle (a router sending
the run round again) are drawn as arcs on the right; a few barycenter sweeps order each layer
to keep crossings down. Every name and label is escaped: the SVG goes into the page as markup.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from html import escape

from graphs.graph import END, START, Graph, reach_from

NODE_H = 34.0
LAYER_GAP = 58.0
NODE_GAP = 26.0
MARGIN = 14.0
CHAR_W = 7.4  # 13px sans-serif, roughly
NODE_PAD = 16.0
MIN_NODE_W = 70.0
ARC_ROOM, ARC_STEP = 34.0, 14.0  # how far back-edge arcs bulge right of the nodes
SWEEPS = 4
NAMES = {START: "START", END: "END"}


@dataclass(frozen=True)
class Edge:
    """One arrow: a plain edge, a router's choice (``route``) or an ``on_error`` fallback."""

    src: str
    dst: str
    kind: str  # plain | route | error
    label: str | None = None


@dataclass
class Box:
    """Where a node sits: its layer and its rectangle."""

    name: str
    layer: int
    x: float = 0.0
    y: float = 0.0
    w: float = 0.0

    @property
    def cx(self) -> float:
        return self.x + self.w / 2

    @property
    def right(self) -> float:
        return self.x + self.w


@dataclass
class Layout:
    """The positioned graph: boxes by name, the edges, which of them point back, the size."""

    boxes: dict[str, Box]
    edges: list[Edge]
    back: set[Edge]
    width: float
    height: float


def edges_of(graph: Graph) -> list[Edge]:
    """Every arrow of ``graph``; a router's labels for one target are joined into one label."""
    labels: dict[tuple[str, str, str], list[str]] = {}
    for src, targets in graph.edges.items():
        for dst in targets:
            labels.setdefault((src, dst, "plain"), [])
    for src, (_, table) in graph.routers.items():
        for label, dst in table.items():
            labels.setdefault((src, dst, "route"), []).append(label)
    for name, node in graph.nodes.items():
        if node.on_error:
            labels.setdefault((name, node.on_error, "error"), []).append("on error")
    return [Edge(src, dst, kind, " / ".join(names) or None)
            for (src, dst, kind), names in labels.items()]


def layout(graph: Graph) -> Layout:
    """Layers from START down to END, ordered within each layer, with coordinates."""
    edges = edges_of(graph)
    names = [START, *graph.nodes] + ([END] if any(e.dst == END for e in edges) else [])
    successors: dict[str, list[str]] = {n: [] for n in names}
    for edge in edges:
        successors[edge.src].append(edge.dst)
    distance = _distances(START, successors)
    reach = {n: reach_from(n, successors) for n in names}
    forward = [e for e in edges if e.src != e.dst and e.src in distance and e.dst in distance
               and (distance[e.src] < distance[e.dst]
                    or (distance[e.src] == distance[e.dst] and e.src not in reach[e.dst]))]
    layer = _longest_paths(names, forward)
    if END in layer:  # END closes the picture even when a short path reaches it
        layer[END] = max([v for n, v in layer.items() if n != END], default=0) + 1
    rows = _ordered_rows(names, layer, forward)
    back = {e for e in edges if e not in set(forward)}
    spans = [abs(layer[e.src] - layer[e.dst]) for e in back]
    arc_room = ARC_ROOM + ARC_STEP * max(spans) if spans else 0.0
    boxes = _place(rows, arc_room)
    width = max((b.right for b in boxes.values()), default=0.0) + MARGIN + arc_room
    height = len(rows) * (NODE_H + LAYER_GAP) - LAYER_GAP + 2 * MARGIN
    return Layout(boxes, edges, back, width, max(height, NODE_H + 2 * MARGIN))


def _distances(start: str, successors: Mapping[str, list[str]]) -> dict[str, int]:
    distance, frontier = {start: 0}, [start]
    while frontier:
        following = []
        for name in frontier:
            for nxt in successors.get(name, []):
                if nxt not in distance:
                    distance[nxt] = distance[name] + 1
                    following.append(nxt)
        frontier = following
    return distance


def _longest_paths(names: list[str], forward: list[Edge]) -> dict[str, int]:
    """Each node's longest forward path from the sources (the forward edges form a DAG)."""
    layer = dict.fromkeys(names, 0)
    incoming = {n: 0 for n in names}
    for edge in forward:
        incoming[edge.dst] += 1
    todo = [n for n in names if incoming[n] == 0]
    while todo:
        name = todo.pop(0)
        for edge in forward:
            if edge.src == name:
                layer[edge.dst] = max(layer[edge.dst], layer[name] + 1)
                incoming[edge.dst] -= 1
                if incoming[edge.dst] == 0:
                    todo.append(edge.dst)
    return layer


def _ordered_rows(names: list[str], layer: Mapping[str, int],
                  forward: list[Edge]) -> list[list[str]]:
    """Nodes per layer, reordered by the mean position of their neighbours (barycenters)."""
    rows: list[list[str]] = [[] for _ in range(max(layer.values(), default=0) + 1)]
    for name in names:
        rows[layer[name]].append(name)
    above = {n: [e.src for e in forward if e.dst == n] for n in names}
    below = {n: [e.dst for e in forward if e.src == n] for n in names}
    for _ in range(SWEEPS):
        for index in range(1, len(rows)):
            rows[index] = _by_barycenter(rows[index], above, rows[index - 1])
        for index in range(len(rows) - 2, -1, -1):
            rows[index] = _by_barycenter(rows[index], below, rows[index + 1])
    return rows


def _by_barycenter(row: list[str], neighbours: Mapping[str, list[str]],
                   other: list[str]) -> list[str]:
    position = {name: i for i, name in enumerate(other)}

    def key(item: tuple[int, str]) -> float:
        index, name = item
        linked = [position[n] for n in neighbours[name] if n in position]
        # scaled to the other row's width, so rows of different sizes line up
        return sum(linked) / len(linked) * len(row) / max(len(other), 1) if linked else index

    return [name for _, name in sorted(enumerate(row), key=key)]


def _place(rows: list[list[str]], arc_room: float) -> dict[str, Box]:
    """Each row centred; ``arc_room`` is kept free on the left for arcs drawn there."""
    boxes: dict[str, Box] = {}
    widths = [sum(_node_width(n) for n in row) + NODE_GAP * (len(row) - 1) for row in rows]
    widest = max(widths, default=0.0)
    for index, row in enumerate(rows):
        x = MARGIN + arc_room + (widest - widths[index]) / 2
        for name in row:
            box = Box(name, index, x, MARGIN + index * (NODE_H + LAYER_GAP), _node_width(name))
            boxes[name] = box
            x += box.w + NODE_GAP
    return boxes


def _node_width(name: str) -> float:
    return max(MIN_NODE_W, len(NAMES.get(name, name)) * CHAR_W + 2 * NODE_PAD)


def taken_edges(edges: Iterable[Edge], ok_ends: Mapping[str, int], started: set[str],
                routes: Iterable[tuple[str, str, str]]) -> dict[Edge, int]:
    """How often the run followed each edge: plain edges out of nodes that ended well and
    into nodes that ran; router and on_error edges from the run's ``route`` events."""
    route_list = list(routes)
    counts: dict[Edge, int] = {}
    for edge in edges:
        if edge.kind != "plain":
            counts[edge] = sum(1 for router, target, label in route_list
                               if (router, target) == (edge.src, edge.dst)
                               and (label == "on_error") == (edge.kind == "error"))
        elif edge.src == START:
            counts[edge] = int(edge.dst in started)
        elif edge.dst == END or edge.dst in started:
            counts[edge] = ok_ends.get(edge.src, 0)
        else:
            counts[edge] = 0
    return counts


def render_svg(graph: Graph, node_states: Mapping[str, str],
               edge_counts: Mapping[Edge, int]) -> str:
    """The graph as an ``<svg>`` element; nodes carry their run state as a class."""
    plan = layout(graph)
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{plan.width:.0f}" '
             f'height="{plan.height:.0f}" viewBox="0 0 {plan.width:.0f} {plan.height:.0f}" '
             f'role="img" aria-label="{escape(graph.name)} workflow graph">', _MARKERS]
    labels: list[str] = []
    for edge in plan.edges:
        count = edge_counts.get(edge, 0)
        path, label_at = _edge_path(plan, edge)
        lx, ly = label_at
        taken = " taken" if count else ""
        marker = "arrow-taken" if count else "arrow"
        times = f" (taken {count}×)" if count > 1 else " (taken)" if count else ""
        parts.append(f'<path class="edge {edge.kind}{taken}" d="{path}" '
                     f'marker-end="url(#{marker})" data-src="{escape(edge.src)}" '
                     f'data-dst="{escape(edge.dst)}"><title>{escape(_title(edge))}{times}'
                     '</title></path>')
        text = edge.label if edge.label and edge.label != edge.dst else None
        if count > 1:
            text = f"{text} ×{count}" if text else f"×{count}"
        if text:
            width = len(text) * 6.4 + 8
            labels.append(f'<rect class="edge-label-bg" x="{lx - width / 2:.1f}" '
                          f'y="{ly - 8:.1f}" width="{width:.1f}" height="16" rx="3"/>'
                          f'<text class="edge-label{taken}" x="{lx:.1f}" y="{ly:.1f}" '
                          f'text-anchor="middle" dominant-baseline="central">{escape(text)}</text>')
    parts += labels
    for name, box in plan.boxes.items():
        state = node_states.get(name, "idle")
        terminal = " terminal" if name in NAMES else ""
        radius = NODE_H / 2 if name in NAMES else 6
        shown = NAMES.get(name, name)
        parts.append(
            f'<g class="node {escape(state)}{terminal}" data-node="{escape(name)}">'
            f'<title>{escape(shown)}: {escape(state)}</title>'
            f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{NODE_H:.0f}" '
            f'rx="{radius:.0f}"/><text x="{box.cx:.1f}" y="{box.y + NODE_H / 2:.1f}" '
            f'text-anchor="middle" dominant-baseline="central">{escape(shown)}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


_MARKERS = ('<defs>' + "".join(
    f'<marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="9" '
    f'markerHeight="9" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
    '<path d="M0,0 L10,5 L0,10 z"/></marker>'
    for name in ("arrow", "arrow-taken")) + '</defs>')


def _title(edge: Edge) -> str:
    kind = {"plain": "", "route": " (router)", "error": " (on error)"}[edge.kind]
    label = f" [{edge.label}]" if edge.label and edge.kind == "route" else ""
    return f"{NAMES.get(edge.src, edge.src)} → {NAMES.get(edge.dst, edge.dst)}{kind}{label}"


def _edge_path(plan: Layout, edge: Edge) -> tuple[str, tuple[float, float]]:
    """The SVG path of one edge and where its label goes."""
    src, dst = plan.boxes[edge.src], plan.boxes[edge.dst]
    if edge.src == edge.dst:  # a node routing to itself: a small loop on its right
        x, y = src.right, src.y + NODE_H / 2
        return (f"M{x:.1f},{y - 7:.1f} C{x + 34:.1f},{y - 24:.1f} {x + 34:.1f},{y + 24:.1f} "
                f"{x:.1f},{y + 7:.1f}", (x + 30, y))
    if edge in plan.back:  # back up a cycle: an arc beside both nodes, on their side
        y1, y2 = src.y + NODE_H / 2, dst.y + NODE_H / 2
        reach = ARC_ROOM * 0.8 + ARC_STEP * abs(src.layer - dst.layer)
        if src.cx + dst.cx < plan.width:  # left half: arc on the left
            x1, x2 = src.x, dst.x - 2
            bulge = min(x1, x2) - reach
        else:
            x1, x2 = src.right, dst.right + 2
            bulge = max(x1, x2) + reach
        return (f"M{x1:.1f},{y1:.1f} C{bulge:.1f},{y1:.1f} {bulge:.1f},{y2:.1f} "
                f"{x2:.1f},{y2:.1f}", (bulge, (y1 + y2) / 2))
    x1, y1 = src.cx, src.y + NODE_H
    x2, y2 = dst.cx, dst.y - 2
    bend = (y2 - y1) / 2
    label = ((x1 + x2) / 2, (y1 + y2) / 2)
    return (f"M{x1:.1f},{y1:.1f} C{x1:.1f},{y1 + bend:.1f} {x2:.1f},{y2 - bend:.1f} "
            f"{x2:.1f},{y2:.1f}", label)

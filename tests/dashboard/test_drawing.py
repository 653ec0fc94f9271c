"""The graph drawing (layers, back edges, escaping) and the timeline's time scale."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from bot.dashboard.drawing import Edge, edges_of, layout, render_svg, taken_edges
from bot.dashboard.timeline import BREAK_WIDTH, Scale, format_duration, nice_step
from graphs import END, START, Graph, Node
from graphs.nodes import human_node, route_on
from tests.dashboard.conftest import Desk


def noop(state: dict[str, Any]) -> dict[str, Any]:
    return {}


def layers(graph: Graph) -> dict[str, int]:
    return {name: box.layer for name, box in layout(graph).boxes.items()}


async def test_triage_is_drawn_in_five_layers_with_the_fetches_side_by_side(desk: Desk) -> None:
    plan = layout(desk.services.flows.triage)
    layer = {name: box.layer for name, box in plan.boxes.items()}
    assert layer == {START: 0, "classify_intent": 1, "check_calendar": 1, "gather": 2,
                     "quick_reply": 3, "full_agent": 3, "notify_now": 3, END: 4}
    assert plan.back == set()
    rows: dict[int, list[Any]] = {}
    for box in plan.boxes.values():
        rows.setdefault(box.layer, []).append(box)
    for row in rows.values():  # no two boxes of a layer overlap
        row.sort(key=lambda b: b.x)
        assert all(a.right <= b.x for a, b in itertools.pairwise(row))


async def test_content_cycles_are_back_edges_and_the_checks_share_a_layer(desk: Desk) -> None:
    plan = layout(desk.services.flows.content)
    layer = {name: box.layer for name, box in plan.boxes.items()}
    assert layer["check_tone"] == layer["check_facts"] == layer["check_length"] == 2
    assert layer["aggregate"] == 3 and layer["revise"] == layer["approval"] == 4
    back = {(e.src, e.dst) for e in plan.back}
    assert {("revise", "check_tone"), ("revise", "check_facts"), ("revise", "check_length"),
            ("feedback", "revise")} == back
    assert layer[END] == max(layer.values())


def test_router_labels_are_merged_and_errors_are_their_own_edges() -> None:
    graph = Graph("choices")
    graph.add_node(human_node("Go?", "decision", ["Yes", "Sure", "No"], on_expiry="late",
                              name="ask"))
    graph.add_node(Node("go", noop))
    graph.add_node(Node("late", noop))
    graph.add_edge(START, "ask")
    graph.add_router("ask", route_on("decision"), {"Yes": "go", "Sure": "go", "No": END})
    graph.add_edge("go", END)
    graph.add_edge("late", END)
    edges = set(edges_of(graph))
    assert Edge("ask", "go", "route", "Yes / Sure") in edges
    assert Edge("ask", END, "route", "No") in edges
    assert Edge("ask", "late", "error", "on error") in edges


def test_taken_edges_follow_routes_and_successful_ends() -> None:
    graph = Graph("pick")
    for name in ("a", "b", "c"):
        graph.add_node(Node(name, noop, on_error="c" if name == "a" else None))
    graph.add_edge(START, "a")
    graph.add_router("a", route_on("next"), {"b": "b", "c": "c"})
    graph.add_edge("b", END)
    graph.add_edge("c", END)
    counts = taken_edges(edges_of(graph), {"a": 1, "b": 1}, {"a", "b"}, [("a", "b", "b")])
    taken = {(e.src, e.dst, e.kind) for e, n in counts.items() if n}
    assert taken == {(START, "a", "plain"), ("a", "b", "route"), ("b", END, "plain")}


def test_every_name_is_escaped_in_the_svg() -> None:
    graph = Graph('<script>alert("x")</script>')
    graph.add_node(Node('<img src=x onerror="boom()">', noop))
    graph.add_edge(START, '<img src=x onerror="boom()">')
    graph.add_edge('<img src=x onerror="boom()">', END)
    svg = render_svg(graph, {'<img src=x onerror="boom()">': '"><b>'}, {})
    assert "<img" not in svg and "<script" not in svg and "<b>" not in svg
    assert "&lt;img src=x onerror=&quot;boom()&quot;&gt;" in svg


def test_a_long_wait_is_squeezed_into_a_break() -> None:
    hour = 3600.0
    scale = Scale(0.0, hour + 1.0, [(0.0, 0.5), (hour, hour + 1.0)])
    assert len(scale.gaps) == 1
    assert scale.x(0.0) == 0.0 and abs(scale.x(hour + 1.0) - 1.0) < 1e-6
    work_width = scale.x(0.5) + (1.0 - scale.x(hour))
    assert abs(work_width - (1.0 - BREAK_WIDTH)) < 1e-6  # the work fills all but the break
    assert abs(scale.x(0.5) / (1.0 - scale.x(hour)) - 0.5) < 1e-3  # and keeps its proportions
    [gap] = scale.breaks()
    assert gap["label"] == "59m 59s"
    xs = [scale.x(t) for t in (0, 0.25, 0.5, 10, hour / 2, hour, hour + 0.5, hour + 1)]
    assert xs == sorted(xs)
    # after the break, ticks count from its end
    assert [t["label"] for t in scale.ticks()] == ["0", "500 ms", "+500 ms", "+1 s"]


def test_short_pauses_stay_to_scale_and_durations_read_well() -> None:
    scale = Scale(0.0, 1.0, [(0.0, 0.4), (0.6, 1.0)])
    assert scale.gaps == [] and abs(scale.x(0.5) - 0.5) < 1e-9
    assert [nice_step(v) for v in (0.0004, 0.0013, 0.03, 0.7, 4.0)] == pytest.approx([
        0.001, 0.002, 0.05, 1.0, 5.0])
    assert [format_duration(s) for s in (0, 0.12, 1.5, 12.0, 192, 7500, 97200)] == [
        "0", "120 ms", "1.5 s", "12 s", "3m 12s", "2h 5m", "1d 3h"]

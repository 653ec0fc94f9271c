"""What the dashboard shows, read from the run log: run rows, and one run's timeline and path.

Everything returned is plain JSON data; the pages put it into the DOM as text, never as
markup (the graph's SVG is built and escaped in ``bot.dashboard.drawing``). Positions on the
timeline are fractions of its width. A stretch where nothing works (a run waiting hours for
an approval) is squeezed into a fixed-width break, so the work around it stays readable.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from bot.dashboard.drawing import edges_of, render_svg, taken_edges
from graphs import END, START, Graph, cost_totals
from graphs.codefirst import flow_view
from graphs.events import EventKind
from graphs.runs import Registry, RunInfo, WaitInfo, result_of
from graphs.runs.reading import RunReading

STATUSES = ("waiting", "running", "failed", "completed", "cancelled")
SCAN_LIMIT = 500  # runs read to filter by route and to list the routes seen
BREAK_WIDTH = 0.06  # of the timeline's width, per squeezed idle stretch
MIN_BREAK_S = 2.0  # idle stretches shorter than this (and than the work) are drawn to scale
TICKS = 6


def list_runs(store: RunReading, status: str | None = None, route: str | None = None,
              limit: int = 100, now: float | None = None) -> dict[str, Any]:
    """Recent runs, waiting ones first, with their costs and open question."""
    now = time.time() if now is None else now
    waiting = store.runs(limit=limit, status="waiting") if status in (None, "waiting") else []
    recent = store.runs(limit=SCAN_LIMIT, status=status)
    routes = sorted({r.route for r in [*waiting, *recent] if r.route})
    runs = list({r.id: r for r in [*waiting, *recent]}.values())  # waiting first, once
    if route:
        runs = [r for r in runs if r.route == route]
    open_waits: dict[str, WaitInfo] = {}
    for wait in store.waits("open"):
        open_waits.setdefault(wait.run_id, wait)
    rows = [run_row(r, store.costs(r.id), open_waits.get(r.id), now) for r in runs[:limit]]
    return {"runs": rows, "routes": routes, "statuses": list(STATUSES),
            "waiting": len(open_waits), "now": now}


def run_row(run: RunInfo, costs: Mapping[str, Any], wait: WaitInfo | None,
            now: float) -> dict[str, Any]:
    """One run as a list row: who, what, how long, how many model calls, what it cost."""
    calls: dict[str, int] = dict(costs["calls"])
    return {"id": run.id, "workflow": run.workflow, "status": run.status, "route": run.route,
            "error": run.error, "started_at": run.started_at, "ended_at": run.ended_at,
            "duration_s": (run.ended_at if run.ended_at is not None else now) - run.started_at,
            "model_calls": sum(calls.values()), "calls_by_role": calls,
            "input_tokens": costs["input_tokens"], "output_tokens": costs["output_tokens"],
            "cost_usd": costs["cost_usd"], "meta": run.meta,
            "who": str(run.meta.get("name") or run.meta.get("user") or ""),
            "words": str(run.meta.get("words") or ""),
            "question": wait.question if wait else None,
            "options": wait.options if wait else [],
            "expires_at": wait.expires_at if wait else None}


@dataclass
class Bar:
    """One node visit (or attempt) on the timeline."""

    node: str
    start: float
    end: float | None = None
    status: str = "running"
    attempt: int = 1
    duration_s: float | None = None
    wrote: list[str] = field(default_factory=list)
    error: str | None = None
    retry_in: float | None = None
    question: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    speculative: bool = False  # a node's work started before the route reached it


def run_detail(store: RunReading, registry: Registry, run_id: str,
               now: float | None = None) -> dict[str, Any] | None:
    """Everything the run page shows, or None for an unknown run."""
    run = store.run(run_id)
    if run is None:
        return None
    now = time.time() if now is None else now
    events = store.events(run_id)
    open_wait = next(iter(store.waits("open", run_id)), None)
    bars, routes = read_bars(events, run, now)
    if run.status == "running":
        bars += in_flight(store, run_id, bars, now)
    blocked = next((list(e.get("blocked") or []) for e in reversed(events)
                    if e["event"] == EventKind.GRAPH_END), [])
    workflow = registry.get(run.workflow)
    graph = None if workflow is None else workflow.graph  # a code workflow has steps instead
    return {"run": run_row(run, cost_totals(events), open_wait, now),
            "timeline": timeline(bars, routes, run.started_at),
            "graph_svg": path_svg(graph, [b for b in bars if not b.speculative], routes,
                                  run.status, blocked) if graph else None,
            "blocked": blocked,
            "waits": [_wait_view(w) for w in store.waits(None, run_id)],
            "state": dict(result_of(store.record(run_id))), "events": events, "now": now,
            "flow": flow_view(store.steps(run_id)),
            "models": sorted({str(e["model"]) for e in events  # the models its calls used
                              if e["event"] == EventKind.MODEL_CALL and e.get("model")}),
            "live": run.status in ("running", "waiting")}


def read_bars(events: list[dict[str, Any]], run: RunInfo,
              now: float) -> tuple[list[Bar], list[dict[str, Any]]]:
    """Node visits and route events from a run's events, in order."""
    bars: list[Bar] = []
    routes: list[dict[str, Any]] = []
    active: dict[str, Bar] = {}  # started, not ended
    parked: list[Bar] = []  # waiting for an answer
    last = events[-1]["t"] if events else run.started_at
    for event in events:
        kind = event["event"]
        node = event.get("node")
        t = float(event["t"])
        if kind == EventKind.GRAPH_START and event.get("resumed"):
            for bar in parked:
                bar.end, bar.status = t, "answered"
            parked.clear()
        elif kind == EventKind.NODE_START and node:
            active[node] = Bar(node, t, attempt=int(event.get("attempt") or 1))
            bars.append(active[node])
        elif kind == EventKind.MODEL_CALL and event.get("speculative"):
            bars.append(speculative_bar(event))
        elif kind == EventKind.SPECULATION and event.get("outcome") in SETTLED:
            for bar in bars:
                if bar.speculative and bar.node == f"{node} (speculative)":
                    bar.status = SETTLED[str(event["outcome"])]
                    if bar.status == "adopted" and node in active:  # its first call, too
                        active[str(node)].calls.extend(bar.calls)
        elif kind in (EventKind.MODEL_CALL, EventKind.TOOL_CALL) and node in active:
            active[str(node)].calls.append(_call_view(event))
        elif kind == EventKind.NODE_END and node:
            found = active.pop(node, None)
            if found is None:  # refused before it ran (a limit): a point on the timeline
                found = Bar(node, t, attempt=int(event.get("attempt") or 0))
                bars.append(found)
            bar = found
            bar.end, bar.duration_s = t, event.get("duration_s")
            bar.wrote, bar.error = list(event.get("wrote") or []), event.get("error")
            bar.retry_in = event.get("retry_in")
            bar.status = ("retrying" if bar.retry_in is not None else
                          "failed" if bar.error else "completed")
        elif kind == EventKind.WAIT and node in active:
            bar = active.pop(str(node))
            bar.status, bar.question = "waiting", str(event.get("question") or "")
            parked.append(bar)
        elif kind == EventKind.ROUTE:
            routes.append({"t": t, "router": event.get("router"),
                           "target": event.get("target"), "label": event.get("label")})
        elif kind == EventKind.GRAPH_END and event.get("status") == "cancelled":
            for bar in parked:
                bar.end, bar.status = t, "cancelled"
            parked.clear()
    for bar in [*active.values(), *parked]:  # still open when the log ends
        live = run.status in ("running", "waiting")
        bar.end = now if live else last
        if not live and bar.status == "running":
            bar.status = "interrupted"
    return bars, routes


# What became of a speculative call that finished: the status of its bar.
SETTLED = {"adopted": "adopted", "unused": "discarded", "discarded": "discarded"}


def speculative_bar(event: dict[str, Any]) -> Bar:
    """A model call started for a node before the route reached it, in a lane of its own:
    ``cancelled`` when the route went elsewhere, ``adopted`` once the node took its answer."""
    end = float(event["t"])
    took = float(event.get("duration_s") or 0.0)
    return Bar(f"{event.get('node')} (speculative)", end - took, end, duration_s=took,
               status="cancelled" if event.get("cancelled") else "completed",
               calls=[_call_view(event)], speculative=True)


def in_flight(store: RunReading, run_id: str, bars: list[Bar], now: float) -> list[Bar]:
    """Nodes a running run is on now. Their start is only stored with their end, so they are
    read from the last node boundary's frontier, starting when they became ready."""
    since: dict[str, float] = {}
    for t, frontier in store.frontiers(run_id):  # the run log's record of what was left
        since = {n: since.get(n, float(t)) for n in frontier.get("ready", [])}
    shown = {b.node for b in bars if b.status in ("running", "waiting")}
    return [Bar(node, t, now, "active") for node, t in since.items() if node not in shown]


def timeline(bars: list[Bar], routes: list[dict[str, Any]], started_at: float) -> dict[str, Any]:
    """Bars placed on a shared axis (fractions of its width), one lane per node."""
    t0 = min([started_at, *(b.start for b in bars)])
    t1 = max([t0, *(b.end or b.start for b in bars), *(r["t"] for r in routes)])
    busy = sorted((b.start, b.end or b.start) for b in bars
                  if b.status not in ("waiting", "answered", "cancelled"))
    scale = Scale(t0, t1, busy)
    lanes: list[str] = []
    placed = []
    for bar in sorted(bars, key=lambda b: b.start):
        if bar.node not in lanes:
            lanes.append(bar.node)
        end = bar.end if bar.end is not None else bar.start
        # the node's own work; the rest of the bar is the engine joining it up
        worked = end if bar.duration_s is None else min(end, bar.start + bar.duration_s)
        # a call drawn inside its bar (an adopted speculative call began before it)
        calls = [{**call, "x0": scale.x(max(bar.start, call["t"] - (call.get("duration_s") or 0))),
                  "x1": scale.x(max(bar.start, call["t"]))} for call in bar.calls]
        placed.append({"node": bar.node, "lane": lanes.index(bar.node), "status": bar.status,
                       "x0": scale.x(bar.start), "x1": scale.x(end),
                       "x_work": scale.x(worked), "start_s": bar.start - t0,
                       "end_s": end - t0, "attempt": bar.attempt, "duration_s": bar.duration_s,
                       "wrote": bar.wrote, "error": bar.error, "retry_in": bar.retry_in,
                       "question": bar.question, "calls": calls})
    return {"lanes": lanes, "bars": placed, "ticks": scale.ticks(), "breaks": scale.breaks(),
            "routes": [{**r, "x": scale.x(r["t"]), "at_s": r["t"] - t0} for r in routes],
            "duration_s": t1 - t0}


class Scale:
    """Time to x (0..1): linear while something works, a fixed-width break across long idle."""

    def __init__(self, t0: float, t1: float, busy: list[tuple[float, float]]) -> None:
        self.t0, self.t1 = t0, t1
        merged: list[list[float]] = []
        for start, end in busy:
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        work = sum(end - start for start, end in merged)
        edges = [t0, *(x for span in merged for x in span), t1]
        gaps = [(a, b) for a, b in zip(edges[::2], edges[1::2], strict=False)
                if b - a > max(MIN_BREAK_S, work)]
        self.gaps = gaps
        linear = (t1 - t0) - sum(b - a for a, b in gaps)
        self.per_s = (1.0 - BREAK_WIDTH * len(gaps)) / max(linear, 1e-6)

    def x(self, t: float) -> float:
        t = min(max(t, self.t0), self.t1)
        squeezed, position = 0.0, 0.0
        for a, b in self.gaps:
            if t <= a:
                break
            if t < b:  # inside a break: proportionally across its fixed width
                return round(self._linear(a, squeezed, position)
                             + BREAK_WIDTH * (t - a) / (b - a), 6)
            squeezed += b - a
            position += BREAK_WIDTH
        return round(self._linear(t, squeezed, position), 6)

    def _linear(self, t: float, squeezed: float, breaks: float) -> float:
        return (t - self.t0 - squeezed) * self.per_s + breaks

    def breaks(self) -> list[dict[str, Any]]:
        return [{"x0": self.x(a), "x1": self.x(b), "label": format_duration(b - a)}
                for a, b in self.gaps]

    def ticks(self) -> list[dict[str, Any]]:
        """Round times along the linear stretches; after a break, counted from its end."""
        linear = (1.0 - BREAK_WIDTH * len(self.gaps)) / self.per_s
        step = nice_step(linear / TICKS)
        ticks = []
        for k in range(int(linear / step + 1e-9) + 1):
            t = self.t0 + k * step
            since = self.t0
            after_break = False
            for a, b in self.gaps:  # skip over the squeezed stretches before this tick
                if t > a:
                    t += b - a
                    since = b
                    after_break = True
            label = format_duration(t - since)
            ticks.append({"x": self.x(t), "label": f"+{label}" if after_break else label})
        return ticks


def nice_step(raw: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``raw`` (>= 1 ms)."""
    for exponent in range(-3, 12):
        for mantissa in (1, 2, 5):
            if (step := mantissa * 10.0 ** exponent) >= raw:
                return step
    return raw


def format_duration(seconds: float) -> str:
    """``0``, ``120 ms``, ``1.5 s``, ``3m 12s``, ``2h 5m``, ``1d 3h``."""
    if seconds <= 0:
        return "0"
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    minutes, hours = int(seconds // 60), int(seconds // 3600)
    if seconds < 3600:
        return f"{minutes}m {int(seconds % 60)}s"
    if seconds < 86400:
        return f"{hours}h {minutes % 60}m"
    return f"{hours // 24}d {hours % 24}h"


def path_svg(graph: Graph, bars: list[Bar], routes: list[dict[str, Any]], status: str,
             blocked: list[str] | None = None) -> str:
    """The workflow's graph with the nodes this run visited, the edges it followed and the
    nodes a failure kept from running (blocked)."""
    states: dict[str, str] = {START: "completed"} if bars else {}
    states.update(dict.fromkeys(blocked or [], "blocked"))
    ok_ends: dict[str, int] = {}
    for bar in bars:
        states[bar.node] = bar.status
        if bar.status == "completed":
            ok_ends[bar.node] = ok_ends.get(bar.node, 0) + 1
    if status == "completed":
        states[END] = "completed"
    hops = [(str(r["router"]), str(r["target"]), str(r["label"])) for r in routes]
    counts = taken_edges(edges_of(graph), ok_ends, {b.node for b in bars}, hops)
    return render_svg(graph, states, counts)


def _call_view(event: dict[str, Any]) -> dict[str, Any]:
    """A model or tool call inside a node, with one line to show for it."""
    if event["event"] == EventKind.MODEL_CALL:
        line = (f"{event.get('role') or '?'} model {event.get('model') or '?'}"
                f" · {event.get('purpose') or '-'} · {event.get('input_tokens') or 0}→"
                f"{event.get('output_tokens') or 0} tokens · ${event.get('cost_usd') or 0:.4f}")
        if event.get("speculative"):
            line += (" · speculative, cancelled (counted at most)" if event.get("cancelled")
                     else " · speculative")
    else:
        ok = "ok" if event.get("ok", True) else "failed"
        line = f"tool {event.get('tool') or '?'}({_short(event.get('arguments'))}) · {ok}"
    took = event.get("duration_s")
    if isinstance(took, int | float):
        line += f" · {format_duration(float(took)) if took > 0 else '0 ms'}"
    failed = bool(event.get("error")) or event.get("ok") is False
    return {"kind": event["event"], "t": float(event["t"]), "duration_s": took, "line": line,
            "error": event.get("error"), "failed": failed}


def _short(value: Any, limit: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _wait_view(wait: WaitInfo) -> dict[str, Any]:
    return {"key": wait.key, "node": wait.node, "question": wait.question,
            "options": wait.options, "status": wait.status, "created_at": wait.created_at,
            "expires_at": wait.expires_at, "answer": wait.answer,
            "answered_by": wait.answered_by, "answered_at": wait.answered_at}

"""What the dashboard shows, read from the run log: run rows, and one run's timeline and path.

Everything returned is plain JSON data; the pages put it into the DOM as text, never as
markup (the graph's SVG is built and escaped in ``bot.dashboard.drawing``; the bars are
placed on the timeline by ``bot.dashboard.timeline``).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from typing import Any

from bot.dashboard.drawing import edges_of, render_svg, taken_edges
from bot.dashboard.timeline import Bar, format_duration, timeline
from graphs import END, START, Graph, cost_totals
from graphs.codefirst import flow_view
from graphs.events import EventKind
from graphs.runs import Registry, RunInfo, WaitInfo, result_of
from graphs.runs.reading import RunReading

STATUSES = ("waiting", "running", "failed", "completed", "cancelled")
SCAN_LIMIT = 500  # runs read to filter by route and to list the routes seen


def list_runs(store: RunReading, status: str | None = None, route: str | None = None,
              limit: int = 100, now: float | None = None,
              before: float | None = None) -> dict[str, Any]:
    """Recent runs, waiting ones first (on the first page), with their costs and open
    question; ``before``: the page of runs started before then (``next_before`` says where
    the next page starts)."""
    now = time.time() if now is None else now
    first_page = before is None and status in (None, "waiting")
    waiting = store.runs(limit=limit, status="waiting") if first_page else []
    recent = store.runs(limit=SCAN_LIMIT, status=status, before=before)
    routes = sorted({r.route for r in [*waiting, *recent] if r.route})
    runs = list({r.id: r for r in [*waiting, *recent]}.values())  # waiting first, once
    if route:
        runs = [r for r in runs if r.route == route]
    open_waits: dict[str, WaitInfo] = {}
    for wait in store.waits("open"):
        open_waits.setdefault(wait.run_id, wait)
    rows = [run_row(r, store.costs(r.id), open_waits.get(r.id), now) for r in runs[:limit]]
    return {"runs": rows, "routes": routes, "statuses": list(STATUSES),
            "waiting": len(open_waits), "now": now,
            "next_before": recent[limit - 1].started_at if len(recent) >= limit else None}


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
            "who": who(run.meta),
            "words": str(run.meta.get("words") or ""),
            "question": wait.question if wait else None,
            "options": wait.options if wait else [],
            "expires_at": wait.expires_at if wait else None}


def who(meta: Mapping[str, Any]) -> str:
    """Who wrote the run's message: their name; for a mail, their name and address (an email
    correspondent is known by the address, the name is theirs to choose)."""
    name = str(meta.get("name") or meta.get("user") or "")
    address = str(meta.get("chat_id") or "")
    if meta.get("platform") == "email" and address:
        return f"{meta['name']} <{address}>" if meta.get("name") else address
    return name


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

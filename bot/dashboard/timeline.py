"""A run's timeline: its bars placed on one axis, idle stretches squeezed, ticks to read it by.

Positions are fractions of the timeline's width. A stretch where nothing works (a run waiting
hours for an approval) is squeezed into a fixed-width break, so the work around it stays
readable; the ticks count from the run's start in round steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

BREAK_WIDTH = 0.06  # of the timeline's width, per squeezed idle stretch
MIN_BREAK_S = 2.0  # idle stretches shorter than this (and than the work) are drawn to scale
TICKS = 6


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

"""Traces: an observer appending run events as JSON lines, and reading node status from events.

``JsonlTrace(path)`` is an observer for ``run_graph``; ``export_jsonl`` writes a stored run's
events (the durable log, ``graphs.store``) as the same JSON lines. ``node_statuses`` replays
events into each node's status: pending, running, retrying, waiting, completed, failed, blocked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any


class JsonlTrace:
    """An observer writing one JSON object per event, flushed as it goes."""

    def __init__(self, path: Path | str) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open

    def __call__(self, event: dict[str, Any]) -> None:
        self._file.write(json.dumps(event, default=str) + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()


def write_jsonl(events: Iterable[dict[str, Any]], path: Path | str) -> int:
    """Write events as JSON lines to ``path``; returns how many."""
    count = 0
    with open(path, "w", encoding="utf-8") as out:
        for event in events:
            out.write(json.dumps(event, default=str) + "\n")
            count += 1
    return count


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """The events of a JSONL trace file, in order."""
    with open(path, encoding="utf-8") as source:
        return [json.loads(line) for line in source if line.strip()]


def node_statuses(events: Iterable[dict[str, Any]], nodes: Iterable[str] = ()) -> dict[str, str]:
    """Each node's status after these events; ``nodes`` lists those never seen (pending)."""
    status = dict.fromkeys(nodes, "pending")
    for event in events:
        kind, node = event.get("event"), event.get("node")
        if kind == "node_start" and node:
            status[node] = "running"
        elif kind == "node_end" and node:
            failed = "retrying" if "retry_in" in event else "failed"
            status[node] = failed if event.get("error") else "completed"
        elif kind == "wait" and node:
            status[node] = "waiting"
        elif kind == "graph_end":
            for blocked in event.get("blocked", []):
                status[blocked] = "blocked"
    return status


def cost_totals(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Sum a run's ``model_call`` events: calls per role, tokens in and out, cost in USD."""
    totals: dict[str, Any] = {"calls": {}, "input_tokens": 0, "output_tokens": 0,
                              "cost_usd": 0.0}
    for event in events:
        if event["event"] == "model_call":
            role = str(event.get("role") or "unknown")
            totals["calls"][role] = totals["calls"].get(role, 0) + 1
            for field in ("input_tokens", "output_tokens", "cost_usd"):
                totals[field] += event.get(field) or 0
    return totals

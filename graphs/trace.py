"""Traces: an observer appending run events as JSON lines, and reading node status from events.

``JsonlTrace(path)`` is an observer for ``run_graph``; ``write_jsonl`` writes a stored run's
events (the durable log, ``graphs.runs``) as the same JSON lines; ``export`` is how the run
layer keeps a run's trace (``graphs.runs.Runs(traces_dir=...)``): one file per run in the
folder of the day it started (``daily_path``), rewritten whole whenever the run stops moving,
so writing it twice gives the same file; the day folders are pruned after some days (``prune``).
``node_statuses`` replays events into each node's status: pending, running, retrying, waiting,
completed, failed, blocked.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import IO, Any

from graphs.events import EventKind


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
    """Write events as JSON lines to ``path`` (its folder made if need be); how many.

    The file is replaced whole (written aside, then renamed), so a reader never sees half of
    it and the same events always give the same file. A write that fails (a full disk) leaves
    no file aside and the old one, if any, as it was."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    aside = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    count = 0
    try:
        with open(aside, "w", encoding="utf-8") as out:
            for event in events:
                out.write(json.dumps(event, default=str) + "\n")
                count += 1
        os.replace(aside, target)
    except BaseException:
        aside.unlink(missing_ok=True)
        raise
    return count


def export(folder: Path, run_id: str, events: Iterable[dict[str, Any]],
           started_at: float) -> Path:
    """A run's JSONL trace in the folder of the day it started; rewritten whole, so exporting
    the same events again (a run that waits, then finishes) keeps one file, the same."""
    path = daily_path(folder, run_id, started_at)
    write_jsonl(events, path)
    return path


def daily_path(folder: Path, run_id: str, now: float | None = None) -> Path:
    """Where a run's trace goes: ``folder/YYYY-MM-DD/<run_id>.jsonl`` (UTC day)."""
    day = datetime.fromtimestamp(time.time() if now is None else now, UTC).date()
    return folder / day.isoformat() / f"{run_id}.jsonl"


def prune(folder: Path, keep_days: float, now: float | None = None, *,
          dry_run: bool = False) -> list[str]:
    """Remove the day folders older than ``keep_days``; the days removed (``dry_run``: the
    days that would be, none removed)."""
    today = datetime.fromtimestamp(time.time() if now is None else now, UTC).date()
    oldest = today - timedelta(days=keep_days)
    removed = []
    for day_folder in sorted(folder.glob("????-??-??")) if folder.exists() else []:
        try:
            day = date.fromisoformat(day_folder.name)
        except ValueError:  # not one of ours
            continue
        if day < oldest and day_folder.is_dir():
            if not dry_run:
                shutil.rmtree(day_folder, ignore_errors=True)
            removed.append(day_folder.name)
    return removed


def read_jsonl(path: Path | str) -> list[dict[str, Any]]:
    """The events of a JSONL trace file, in order."""
    with open(path, encoding="utf-8") as source:
        return [json.loads(line) for line in source if line.strip()]


def node_statuses(events: Iterable[dict[str, Any]], nodes: Iterable[str] = ()) -> dict[str, str]:
    """Each node's status after these events; ``nodes`` lists those never seen (pending)."""
    status = dict.fromkeys(nodes, "pending")
    for event in events:
        kind, node = event.get("event"), event.get("node")
        if kind == EventKind.NODE_START and node:
            status[node] = "running"
        elif kind == EventKind.NODE_END and node:
            failed = "retrying" if "retry_in" in event else "failed"
            status[node] = failed if event.get("error") else "completed"
        elif kind == EventKind.WAIT and node:
            status[node] = "waiting"
        elif kind == EventKind.GRAPH_END:
            for blocked in event.get("blocked", []):
                status[blocked] = "blocked"
    return status


def cost_totals(events: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Sum a run's ``model_call`` events: calls per role, tokens in and out, cost in USD."""
    totals: dict[str, Any] = {"calls": {}, "input_tokens": 0, "output_tokens": 0,
                              "cost_usd": 0.0}
    for event in events:
        if event["event"] == EventKind.MODEL_CALL:
            role = str(event.get("role") or "unknown")
            totals["calls"][role] = totals["calls"].get(role, 0) + 1
            for field in ("input_tokens", "output_tokens", "cost_usd"):
                totals[field] += event.get(field) or 0
    return totals

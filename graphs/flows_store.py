"""Where code workflows keep their completed calls: the ``run_steps`` table, in the run store.

A code workflow's run is an ordinary row in ``runs`` (its events in ``run_events``, its
questions in ``run_waits``, see ``graphs.store``); each call it makes (``agent``, ``step``, an
``ask`` round, a pipeline cell) adds one row here under its stable key, with its fingerprint
and, once done, its output as JSON. ``flow_view`` gives the dashboard one JSON shape for a
run's steps and its pipelines as items × stages matrices.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from typing import Any

from memory.db import Migration, migrate

MIGRATIONS: list[Migration] = [
    ("runs_flows_001_steps", """
        CREATE TABLE run_steps (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            key TEXT NOT NULL,             -- stable: the name, or name[key_by], scoped by '/'
            kind TEXT NOT NULL,            -- agent | step | ask | cell | pipeline
            status TEXT NOT NULL,          -- running | waiting | done | failed | cancelled
            fingerprint TEXT NOT NULL,
            parts TEXT NOT NULL,           -- JSON: the hash of each fingerprinted part
            output TEXT,                   -- JSON: the saved output (status done)
            error TEXT,
            pipeline TEXT,                 -- a pipeline cell: its pipeline, item and stage
            item TEXT,
            stage TEXT,
            started_at REAL NOT NULL,
            ended_at REAL,
            PRIMARY KEY (run_id, key)
        );
        CREATE INDEX run_steps_cells ON run_steps (run_id, pipeline) WHERE pipeline IS NOT NULL;
    """),
]


@dataclass
class StepRow:
    """One recorded call of a code workflow."""

    key: str
    kind: str
    status: str
    fingerprint: str
    parts: dict[str, str]
    output: Any
    error: str | None
    started_at: float
    ended_at: float | None


class StepLog:
    """Reads and writes a run's steps on the run store's connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        migrate(conn, MIGRATIONS)

    def get(self, run_id: str, key: str) -> StepRow | None:
        row = self.conn.execute(
            "SELECT key, kind, status, fingerprint, parts, output, error, started_at, ended_at"
            " FROM run_steps WHERE run_id = ? AND key = ?", (run_id, key)).fetchone()
        if row is None:
            return None
        return StepRow(row[0], row[1], row[2], row[3], json.loads(row[4]),
                       None if row[5] is None else json.loads(row[5]), row[6], row[7], row[8])

    def start(self, run_id: str, key: str, kind: str, fingerprint: str, parts: dict[str, str],
              cell: tuple[str, str, str] | None = None, status: str = "running") -> None:
        """A call begins (or begins again: a re-run replaces the old row)."""
        pipeline, item, stage = cell or (None, None, None)
        self.conn.execute(
            "INSERT OR REPLACE INTO run_steps (run_id, key, kind, status, fingerprint, parts,"
            " pipeline, item, stage, started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (run_id, key, kind, status, fingerprint, json.dumps(parts), pipeline, item, stage,
             time.time()))

    def finish(self, run_id: str, key: str, output_json: str) -> None:
        self.conn.execute("UPDATE run_steps SET status = 'done', output = ?, error = NULL,"
                          " ended_at = ? WHERE run_id = ? AND key = ?",
                          (output_json, time.time(), run_id, key))

    def mark(self, run_id: str, key: str, status: str, error: str | None = None) -> None:
        ended = time.time() if status == "failed" else None
        self.conn.execute("UPDATE run_steps SET status = ?, error = ?, ended_at = ?"
                          " WHERE run_id = ? AND key = ?", (status, error, ended, run_id, key))

    def layout(self, run_id: str, name: str, items: list[str], stages: list[str]) -> None:
        """A pipeline's shape, so pending cells show too (kept as a 'pipeline' row)."""
        shape = json.dumps({"items": items, "stages": stages}, ensure_ascii=False)
        self.conn.execute(
            "INSERT OR REPLACE INTO run_steps (run_id, key, kind, status, fingerprint, parts,"
            " output, pipeline, started_at) VALUES (?, ?, 'pipeline', 'done', '', '{}', ?, ?, ?)",
            (run_id, name, shape, name, time.time()))

    def reruns(self, run_id: str) -> set[str]:
        """The re-run choices recorded for a run (``rerun`` events)."""
        chosen: set[str] = set()
        for (data,) in self.conn.execute("SELECT data FROM run_events WHERE run_id = ? AND"
                                         " event = 'rerun'", (run_id,)):
            chosen.update(json.loads(data).get("steps", []))
        return chosen


def flow_view(conn: sqlite3.Connection, run_id: str) -> dict[str, Any]:
    """A code workflow run for the dashboard (empty lists for a graph run).

    ``{"steps": [{"key", "kind", "status", "started_at", "ended_at", "duration_s", "error"}],
    "pipelines": [{"name", "items": [...], "stages": [...],
    "cells": [[{"status", "duration_s"} per stage] per item]}]}``; a cell's status is
    ``pending``, ``running``, ``waiting``, ``done``, ``failed`` or ``cancelled``.
    """
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_steps'").fetchone() is None:
        return {"steps": [], "pipelines": []}  # no code workflow has run on this database
    rows = conn.execute(
        "SELECT key, kind, status, error, pipeline, item, stage, output, started_at, ended_at"
        " FROM run_steps WHERE run_id = ? ORDER BY started_at, rowid", (run_id,)).fetchall()
    steps, shapes, cells = [], {}, {}
    for key, kind, status, error, pipeline, item, stage, output, started, ended in rows:
        took = None if ended is None else round(ended - started, 6)
        if kind == "pipeline":
            shapes[pipeline] = json.loads(output)
            continue
        if kind == "cell":
            cells[(pipeline, item, stage)] = {"status": status, "duration_s": took}
        steps.append({"key": key, "kind": kind, "status": status, "started_at": started,
                      "ended_at": ended, "duration_s": took, "error": error})
    pending = {"status": "pending", "duration_s": None}
    pipelines = [{"name": name, "items": shape["items"], "stages": shape["stages"],
                  "cells": [[cells.get((name, item, stage), pending) for stage in shape["stages"]]
                            for item in shape["items"]]}
                 for name, shape in shapes.items()]
    return {"steps": steps, "pipelines": pipelines}


def matrix_text(grid: dict[str, Any]) -> str:
    """A pipeline from ``flow_view`` as a plain-text items × stages table."""
    width = max([len("item"), *(len(item) for item in grid["items"])])
    sizes = [max(len(stage), 9) for stage in grid["stages"]]
    lines = [f"pipeline {grid['name']} (items × stages):",
             "  " + "  ".join(["item".ljust(width), *(s.ljust(n) for s, n in
                                                    zip(grid["stages"], sizes, strict=True))])]
    for item, row in zip(grid["items"], grid["cells"], strict=True):
        cells = [cell["status"].ljust(n) for cell, n in zip(row, sizes, strict=True)]
        lines.append("  " + "  ".join([item.ljust(width), *cells]).rstrip())
    return "\n".join(lines)

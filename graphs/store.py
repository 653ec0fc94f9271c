"""The durable run log in SQLite: runs, their events (with what each node wrote), and waits.

A run is recorded at node boundaries, append-only: each event is a row, and a node's
``node_end`` row also carries the JSON of what it wrote and the frontier left to run. The
state is never stored whole: replaying the deltas over the input rebuilds it, so storage grows
with what nodes write. Waits (a ``human_node``'s question) have a row each; answering one is
``UPDATE ... WHERE status = 'open'``, so of two racing answers exactly one wins. Continuing a
run (resume, recovery, expiry) lives in ``graphs.durable``. Nothing here unpickles anything.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphs.engine import Graph, GraphRunError, GraphState, RunResult
from memory.db import Migration, connect, migrate

MIGRATIONS: list[Migration] = [
    ("runs_001_create", """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY,
            workflow TEXT NOT NULL,
            status TEXT NOT NULL,          -- running | waiting | completed | failed | cancelled
            input TEXT NOT NULL,           -- JSON: the state the run started from
            meta TEXT NOT NULL,            -- JSON: what the caller attached (chat, user...)
            max_steps INTEGER NOT NULL,
            route TEXT,                    -- the last route target taken
            error TEXT,
            started_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            ended_at REAL
        );
        CREATE INDEX runs_by_start ON runs (started_at);
        CREATE INDEX runs_by_status ON runs (status);
        CREATE TABLE run_events (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            t REAL NOT NULL,
            event TEXT NOT NULL,
            node TEXT,
            data TEXT NOT NULL,            -- JSON: the event's other fields
            delta TEXT,                    -- JSON: what the node wrote (node boundaries)
            frontier TEXT,                 -- JSON: {"ready": [...], "waiting": {node: key}}
            UNIQUE (run_id, seq)
        );
        CREATE TABLE run_waits (
            run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
            key TEXT NOT NULL,
            node TEXT NOT NULL,
            question TEXT NOT NULL,
            options TEXT NOT NULL,         -- JSON list
            created_at REAL NOT NULL,
            expires_at REAL,
            status TEXT NOT NULL,          -- open | answered | expired | cancelled
            answer TEXT,                   -- JSON
            answered_by TEXT,
            answered_at REAL,
            UNIQUE (run_id, key)
        );
        CREATE INDEX run_waits_open ON run_waits (status, expires_at);
    """),
]

_TAGS = ("event", "run_id", "t", "node")  # kept in their own columns, not in ``data``
_SIDE_EFFECTS = ("route", "wait")  # events that also update runs / run_waits


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode  # built once: fast
_dumps_any = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


@dataclass
class RunInfo:
    """One run as listed: ``frontdesk runs`` and the dashboard read these."""

    id: str
    workflow: str
    status: str
    route: str | None
    error: str | None
    meta: dict[str, Any]
    started_at: float
    ended_at: float | None

    @property
    def duration_s(self) -> float | None:
        return None if self.ended_at is None else self.ended_at - self.started_at


@dataclass
class WaitInfo:
    """One question a run waits on (or waited on), with the run's workflow and meta."""

    run_id: str
    key: str
    node: str
    question: str
    options: list[str]
    status: str
    created_at: float
    expires_at: float | None
    answer: Any
    answered_by: str | None
    answered_at: float | None
    workflow: str
    meta: dict[str, Any]


class RunStore:
    """Runs recorded in the one Frontdesk database; also the registry of workflow graphs."""

    def __init__(self, path: Path | str) -> None:
        self.conn = connect(path)
        migrate(self.conn, MIGRATIONS)
        self.graphs: dict[str, Graph] = {}
        self._seq: dict[str, int] = {}  # next event number per run written by this process

    def close(self) -> None:
        self.conn.close()

    def register(self, graph: Graph) -> None:
        """Make ``graph`` findable by its name, for resume and recovery in this process."""
        graph.compiled()
        self.graphs[graph.name] = graph

    # -- what the engine calls (graphs.engine.RunStore) ------------------------------------

    def begin(self, run_id: str, graph: Graph, state: RunResult, max_steps: int) -> None:
        """Create the run's row with its input and meta; registers the graph."""
        self.graphs.setdefault(graph.name, graph)
        now = time.time()
        self.conn.execute(
            "INSERT INTO runs (id, workflow, status, input, meta, max_steps, started_at,"
            " updated_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
            (run_id, graph.name, _json_or_raise(dict(state), "the input key"),
             _dumps(state.meta), max_steps, now, now))
        self._seq[run_id] = 0

    def append(self, run_id: str, events: list[dict[str, Any]], delta: GraphState | None = None,
               frontier: dict[str, Any] | None = None) -> None:
        """Append events; the last carries the delta and frontier (one transaction).

        A ``graph_end`` event also sets the run's status (and error); a ``route`` its route.
        """
        status = next((e["status"] for e in events if e["event"] == "graph_end"), None)
        try:
            delta_json = None if delta is None else _dumps(delta)
        except (TypeError, ValueError):
            node = next((e.get("node") for e in events if e["event"] == "node_end"), "?")
            _json_or_raise(delta or {}, f"node {node!r} wrote")
            raise
        seq = self._seq.get(run_id)
        if seq is None:
            seq = self._seq[run_id] = self.next_seq(run_id)
        rows: list[tuple[Any, ...]] = [
            (run_id, seq + i, e["t"], e["event"], e.get("node"),
             _dumps_any({k: v for k, v in e.items() if k not in _TAGS}), None, None)
            for i, e in enumerate(events)]
        if rows and (delta_json is not None or frontier is not None):
            rows[-1] = (*rows[-1][:6], delta_json, None if frontier is None else _dumps(frontier))
        if status is None and not any(e["event"] in _SIDE_EFFECTS for e in events):
            if len(rows) == 1:  # one autocommit insert
                self._insert(rows)
            elif rows:
                self.conn.execute("BEGIN")
                try:
                    self._insert(rows)
                    self.conn.execute("COMMIT")
                except BaseException:
                    self.conn.execute("ROLLBACK")
                    raise
        else:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self._insert(rows)
                self._side_effects(run_id, events, status)
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
        self._seq[run_id] = seq + len(rows)

    def _insert(self, rows: list[tuple[Any, ...]]) -> None:
        try:
            for row in rows:
                self.conn.execute("INSERT INTO run_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        except sqlite3.IntegrityError as exc:  # UNIQUE(run_id, seq): someone else writes it
            raise GraphRunError(f"run {rows[0][0]!r} is being continued by another process"
                                ) from exc

    def _side_effects(self, run_id: str, events: list[dict[str, Any]], status: str | None) -> None:
        now = time.time()
        for event in events:
            if event["event"] == "route":
                self.conn.execute("UPDATE runs SET route = ? WHERE id = ?",
                                  (event["target"], run_id))
            elif event["event"] == "wait":
                self.conn.execute(
                    "INSERT OR IGNORE INTO run_waits (run_id, key, node, question, options,"
                    " created_at, expires_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'open')",
                    (run_id, event["key"], event["node"], str(event.get("question", "")),
                     _dumps(event.get("options") or []), event["t"], event.get("expires_at")))
        if status is not None:
            ended = now if status in ("completed", "failed") else None
            error = next((e.get("error") for e in events if e["event"] == "graph_end"), None)
            self.conn.execute(
                "UPDATE runs SET status = ?, updated_at = ?, ended_at = ?, error = ?"
                " WHERE id = ? AND status != 'cancelled'", (status, now, ended, error, run_id))

    async def resume(self, run_id: str, answer: Any, by: str) -> RunResult:
        """Continue a waiting run with an answer (see ``graphs.durable.resume``)."""
        from graphs.durable import resume  # durable builds on this module

        return await resume(self, run_id, answer, by)

    # -- reading ---------------------------------------------------------------------------

    def next_seq(self, run_id: str) -> int:
        row = self.conn.execute("SELECT MAX(seq) FROM run_events WHERE run_id = ?",
                                (run_id,)).fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    def run(self, run_id: str) -> RunInfo | None:
        rows = self._runs("WHERE id = ?", (run_id,))
        return rows[0] if rows else None

    def runs(self, limit: int = 20, status: str | None = None) -> list[RunInfo]:
        """The most recent runs first (optionally only those with ``status``)."""
        where, args = ("WHERE status = ?", (status,)) if status else ("", ())
        return self._runs(f"{where} ORDER BY started_at DESC, rowid DESC LIMIT ?", (*args, limit))

    def _runs(self, clause: str, args: tuple[Any, ...]) -> list[RunInfo]:
        rows = self.conn.execute(
            "SELECT id, workflow, status, route, error, meta, started_at, ended_at FROM runs "
            + clause, args).fetchall()
        return [RunInfo(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7])
                for r in rows]

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's events in order, as the observer saw them."""
        rows = self.conn.execute("SELECT event, node, t, data FROM run_events WHERE run_id = ?"
                                 " ORDER BY seq", (run_id,)).fetchall()
        return [{"event": kind, **({"node": node} if node is not None else {}),
                 **json.loads(data), "run_id": run_id, "t": t} for kind, node, t, data in rows]

    def waits(self, status: str | None = "open", run_id: str | None = None) -> list[WaitInfo]:
        """Waits with their run's workflow and meta, oldest first (default: still open)."""
        clauses = [c for c, v in (("w.status = ?", status), ("w.run_id = ?", run_id)) if v]
        rows = self.conn.execute(
            "SELECT w.run_id, w.key, w.node, w.question, w.options, w.status, w.created_at,"
            " w.expires_at, w.answer, w.answered_by, w.answered_at, r.workflow, r.meta"
            " FROM run_waits w JOIN runs r ON r.id = w.run_id"
            + (" WHERE " + " AND ".join(clauses) if clauses else "")
            + " ORDER BY w.created_at, w.rowid",
            tuple(v for v in (status, run_id) if v)).fetchall()
        return [WaitInfo(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7],
                         None if r[8] is None else json.loads(r[8]), r[9], r[10], r[11],
                         json.loads(r[12])) for r in rows]

    def costs(self, run_id: str) -> dict[str, Any]:
        """Model calls of a run: count per role, tokens and cost in USD."""
        totals: dict[str, Any] = {"calls": {}, "input_tokens": 0, "output_tokens": 0,
                                  "cost_usd": 0.0}
        for event in self.events(run_id):
            if event["event"] == "model_call":
                role = str(event.get("role") or "unknown")
                totals["calls"][role] = totals["calls"].get(role, 0) + 1
                for field in ("input_tokens", "output_tokens", "cost_usd"):
                    totals[field] += event.get(field) or 0
        return totals


def _json_or_raise(values: dict[str, Any], owner: str) -> str:
    """``values`` as JSON, or a GraphRunError naming the owner and the first bad key."""
    try:
        return _dumps(values)
    except (TypeError, ValueError) as exc:
        bad = next((k for k, v in values.items() if not _is_json(v)), "?")
        raise GraphRunError(f"{owner} {bad!r}: a {type(values.get(bad)).__name__} is not plain "
                            "JSON (store str, numbers, bools, None, lists, dicts)") from exc


def _is_json(value: Any) -> bool:
    try:
        _dumps(value)
    except (TypeError, ValueError):
        return False
    return True

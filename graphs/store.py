"""The durable run log in SQLite: runs, their events (with what each node wrote), and waits.

A run is recorded at node boundaries, append-only: each event is a row, and a node's
``node_end`` row also carries the JSON of what it wrote and the frontier left to run. The
state is never stored whole: replaying the deltas over the input rebuilds it, so storage grows
with what nodes write. Waits (a ``human_node``'s question) have a row each; answering one is
``UPDATE ... WHERE status = 'open'``, so of two racing answers exactly one wins. Continuing a
run (resume, recovery, expiry) lives in ``graphs.durable``. Nothing here unpickles anything.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Callable
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
_SIDE_EFFECTS = ("route", "wait", "graph_end")  # events that also update runs / run_waits
_ROWS_PER_INSERT = 64  # up to this many events go in one INSERT statement
_INSERT_ONE = "INSERT INTO run_events VALUES (?, ?, ?, ?, ?, ?, ?, ?)"


def _compact_json(default: Callable[[Any], Any]) -> Callable[[Any], str]:
    """A compact JSON encoder built once. ``JSONEncoder.encode`` builds its C encoder anew on
    every call, which costs more than encoding a node's small writes; this keeps one."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # no C accelerator here: the plain encoder
        return json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=default).encode
    # (markers, default, encoder, indent, key sep, item sep, sort_keys, skipkeys, allow_nan);
    # no markers: a cycle raises RecursionError instead of ValueError (both are refused)
    encode = make(None, default, json.encoder.encode_basestring, None, ":", ",", False, False,
                  True)
    return lambda value: "".join(encode(value, 0))


_dumps = _compact_json(json.JSONEncoder().default)  # anything not JSON: TypeError
_dumps_any = _compact_json(str)  # event fields: anything else is stored as its str()
_NOT_JSON = (TypeError, ValueError, RecursionError)


@functools.cache
def _insert_rows(count: int) -> str:
    """One INSERT for ``count`` events (cached: SQLite reuses the prepared statement)."""
    return "INSERT INTO run_events VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * count)


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
        """Append events, the last with the delta and frontier; all or nothing.

        This is the durable step, once per node boundary, so it is kept lean: one INSERT for
        all the events, which SQLite runs as one transaction; only events that also change
        ``runs`` or ``run_waits`` (route, wait, graph_end) take an explicit transaction.
        Durability: WAL with synchronous=NORMAL (``memory.db.connect``): a process crash loses
        nothing committed; a power loss may lose the last boundaries (never corrupting the
        file), and then the node runs again on recovery, as an in-flight node would.
        """
        if not events:
            return
        seq = self._seq.get(run_id)
        if seq is None:  # another process may have written: count on from the log
            seq = self._seq[run_id] = self.next_seq(run_id)
        values: list[Any] = []
        for i, event in enumerate(events):
            data = _dumps_any({k: v for k, v in event.items() if k not in _TAGS})
            values += (run_id, seq + i, event["t"], event["event"], event.get("node"), data,
                       None, None)
        if delta is not None:
            values[-2] = _delta_json(delta, events)
        if frontier is not None:
            values[-1] = _dumps(frontier)
        try:
            if len(events) <= _ROWS_PER_INSERT and not any(
                    event["event"] in _SIDE_EFFECTS for event in events):
                self.conn.execute(_insert_rows(len(events)), values)
            else:
                self._write_with_side_effects(run_id, events, values)
        except sqlite3.IntegrityError as exc:  # UNIQUE(run_id, seq): someone else writes it
            raise GraphRunError(f"run {run_id!r} is being continued by another process") from exc
        self._seq[run_id] = seq + len(events)
        if events[-1]["event"] == "graph_end":  # a later append (resume) reads the log again
            del self._seq[run_id]

    def _write_with_side_effects(self, run_id: str, events: list[dict[str, Any]],
                                 values: list[Any]) -> None:
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            self.conn.executemany(_INSERT_ONE, [values[i:i + 8] for i in range(0, len(values), 8)])
            self._side_effects(run_id, events)
            self.conn.execute("COMMIT")
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise

    def _side_effects(self, run_id: str, events: list[dict[str, Any]]) -> None:
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
            elif event["event"] == "graph_end":
                status = event["status"]
                ended = now if status in ("completed", "failed") else None
                self.conn.execute(
                    "UPDATE runs SET status = ?, updated_at = ?, ended_at = ?, error = ?"
                    " WHERE id = ? AND status != 'cancelled'",
                    (status, now, ended, event.get("error"), run_id))

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
        return cost_totals(self.events(run_id))


def cost_totals(events: list[dict[str, Any]]) -> dict[str, Any]:
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


def _delta_json(delta: GraphState, events: list[dict[str, Any]]) -> str:
    """What a node wrote, as JSON; else a GraphRunError naming the node and the key."""
    try:
        return _dumps(delta)
    except _NOT_JSON:
        node = next((e.get("node") for e in events if e["event"] == "node_end"), "?")
        return _json_or_raise(delta, f"node {node!r} wrote")


def _json_or_raise(values: dict[str, Any], owner: str) -> str:
    """``values`` as JSON, or a GraphRunError naming the owner and the first bad key."""
    try:
        return _dumps(values)
    except _NOT_JSON as exc:
        bad = next((k for k, v in values.items() if not _is_json(v)), "?")
        raise GraphRunError(f"{owner} {bad!r}: a {type(values.get(bad)).__name__} is not plain "
                            "JSON (store str, numbers, bools, None, lists, dicts)") from exc


def _is_json(value: Any) -> bool:
    try:
        _dumps(value)
    except _NOT_JSON:
        return False
    return True

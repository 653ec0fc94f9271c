"""The run store: the one owner of the run tables (``graphs.runs.schema``), with typed methods.

A run is recorded at node boundaries, append-only (``append``): each event a row, a boundary's
row also carrying the JSON of what the node wrote and the frontier left to run (what is ready,
what waits, how often each node ran). The state is never stored whole: the input plus every
delta rebuilds it (``record``), so storage grows with what nodes write. A wait is a row;
answering, expiring or cancelling it is ``UPDATE ... WHERE status = 'open'``, so of two racing
answers exactly one wins, and an answer the run has not used yet is kept as "not taken".
Several statements that must land together go through ``transaction()``. The store is built
over the one ``Database`` (its writer); whoever opens that applies ``graphs.runs.schema``'s
migrations. Nothing here unpickles anything. Reading for lists and the dashboard is
``graphs.runs.reading``.
"""

from __future__ import annotations

import functools
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from graphs.events import EventKind
from graphs.graph import GraphRunError, GraphState, RunResult
from graphs.runs.reading import RunReading
from graphs.runs.records import RunInfo
from graphs.runs.schema import MIGRATIONS
from sqlitedb import transaction
from sqlitedb.database import Database

_TAGS = ("event", "run_id", "t", "node")  # kept in their own columns, not in ``data``
# events that also update runs / run_waits
_SIDE_EFFECTS = (EventKind.ROUTE, EventKind.WAIT, EventKind.GRAPH_END)
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


dumps = _compact_json(json.JSONEncoder().default)  # anything not JSON: TypeError
_dumps_any = _compact_json(str)  # event fields: anything else is stored as its str()
_NOT_JSON = (TypeError, ValueError, RecursionError)


@functools.lru_cache(maxsize=64)  # a batch's size: a few sizes recur, any may come once
def _insert_rows(count: int) -> str:
    """One INSERT for ``count`` events (cached: SQLite reuses the prepared statement)."""
    return "INSERT INTO run_events VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?, ?)"] * count)


class RunStore(RunReading):
    """Runs, their events, waits and steps in the one Frontdesk database."""

    def __init__(self, db: Database) -> None:
        # the writer for reads too: a run's reads must see its own writes as they land
        super().__init__(db.writer)
        self.db = db
        self._seq: dict[str, int] = {}  # next event number per run written by this process

    @classmethod
    def open(cls, path: Path | str) -> RunStore:
        """A store on a ``Database`` of its own, the run tables' migrations applied: for a
        process that keeps only runs (a test, a bench, a worker); ``store.db.close()`` ends it."""
        return cls(Database(path, migrations=MIGRATIONS))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Several writes, all or nothing (``sqlitedb.transaction`` on the writer)."""
        with transaction(self.conn) as conn:
            yield conn

    # -- the run log -----------------------------------------------------------------------

    def begin(self, run_id: str, workflow: str, state: RunResult, max_steps: int) -> None:
        """Create the run's row with its input and meta."""
        now = time.time()
        self.conn.execute(
            "INSERT INTO runs (id, workflow, status, input, meta, max_steps, started_at,"
            " updated_at) VALUES (?, ?, 'running', ?, ?, ?, ?, ?)",
            (run_id, workflow, _json_or_raise(dict(state), "the input key"),
             dumps(state.meta), max_steps, now, now))
        self._seq[run_id] = 0

    def append(self, run_id: str, events: list[dict[str, Any]], delta: GraphState | None = None,
               frontier: dict[str, Any] | None = None, taken: str | None = None) -> None:
        """Append events, the last with the delta and frontier; all or nothing.

        This is the durable step, once per node boundary, so it is kept lean: one INSERT for
        all the events, which SQLite runs as one transaction; only events that also change
        ``runs`` or ``run_waits`` (route, wait, graph_end, an answer ``taken``) take an
        explicit one. Durability: WAL with synchronous=NORMAL (``sqlitedb.connect``): a
        process crash loses nothing committed; a power loss may lose the last boundaries
        (never corrupting the file), and then the node runs again, as an in-flight node would.
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
            values[-1] = dumps(frontier)
        try:
            if taken is None and len(events) <= _ROWS_PER_INSERT and not any(
                    event["event"] in _SIDE_EFFECTS for event in events):
                self.conn.execute(_insert_rows(len(events)), values)
            else:
                with self.transaction():
                    self.conn.executemany(_INSERT_ONE, [values[i:i + 8]
                                                        for i in range(0, len(values), 8)])
                    self._side_effects(run_id, events, taken)
        except sqlite3.IntegrityError as exc:  # UNIQUE(run_id, seq): someone else writes it
            self._seq.pop(run_id, None)
            raise GraphRunError(f"run {run_id!r} is being continued by another process") from exc
        self._seq[run_id] = seq + len(events)
        if events[-1]["event"] == EventKind.GRAPH_END:  # a later append (resume) reads the log
            del self._seq[run_id]

    def _side_effects(self, run_id: str, events: list[dict[str, Any]], taken: str | None) -> None:
        now = time.time()
        if taken is not None:
            self.conn.execute("UPDATE run_waits SET taken_at = ? WHERE run_id = ? AND key = ?",
                              (now, run_id, taken))
        for event in events:
            if event["event"] == EventKind.ROUTE:
                self.conn.execute("UPDATE runs SET route = ? WHERE id = ?",
                                  (event["target"], run_id))
            elif event["event"] == EventKind.WAIT:
                self.conn.execute(
                    "INSERT OR IGNORE INTO run_waits (run_id, key, node, question, options,"
                    " created_at, expires_at, status) VALUES (?, ?, ?, ?, ?, ?, ?, 'open')",
                    (run_id, event["key"], event["node"], str(event.get("question", "")),
                     dumps(event.get("options") or []), event["t"], event.get("expires_at")))
            elif event["event"] == EventKind.GRAPH_END:
                status = event["status"]
                ended = now if status in ("completed", "failed") else None
                self.conn.execute(
                    "UPDATE runs SET status = ?, updated_at = ?, ended_at = ?, error = ?"
                    " WHERE id = ? AND status != 'cancelled'",
                    (status, now, ended, event.get("error"), run_id))

    def note(self, run_id: str, kind: str, **fields: Any) -> None:
        """One event from outside a runner (a cancel, a re-run choice); counts on from the log."""
        self._seq.pop(run_id, None)  # others may have written since: read it again
        self.append(run_id, [{"event": kind, **fields, "run_id": run_id, "t": time.time()}])

    # -- claiming a run --------------------------------------------------------------------

    def claim(self, run_id: str, from_status: tuple[str, ...]) -> bool:
        """Mark the run running if it is in one of ``from_status``: of two claims, one wins."""
        marks = ", ".join("?" * len(from_status))
        claimed = self.conn.execute(
            f"UPDATE runs SET status = 'running', updated_at = ? WHERE id = ?"
            f" AND status IN ({marks})", (time.time(), run_id, *from_status)).rowcount
        if claimed:
            self._seq.pop(run_id, None)  # the log may have grown elsewhere: count on from it
        return bool(claimed)

    def reopen(self, run_id: str, steps: list[str]) -> bool:
        """A chosen re-run: the run is running again (unless cancelled), the choice recorded."""
        reopened = self.conn.execute(
            "UPDATE runs SET status = 'running', error = NULL, ended_at = NULL, updated_at = ?"
            " WHERE id = ? AND status != 'cancelled'", (time.time(), run_id)).rowcount
        if reopened:
            self.note(run_id, EventKind.RERUN, steps=steps)
        return bool(reopened)

    def cancel(self, run_id: str, by: str | None = None) -> bool:
        """Cancel a waiting or running run and close its open waits; False if it had ended."""
        return self.stop(run_id, "cancelled", by=by)

    def stop(self, run_id: str, status: str, *, by: str | None = None,
             error: str | None = None) -> bool:
        """End a waiting or running run from outside its runner (cancelled, or failed with
        ``error``) and close its open waits; False if it had ended already."""
        now = time.time()
        with self.transaction():
            stopped = self.conn.execute(
                "UPDATE runs SET status = ?, error = ?, updated_at = ?, ended_at = ? WHERE id = ?"
                " AND status IN ('running', 'waiting')",
                (status, error, now, now, run_id)).rowcount
            self.conn.execute(
                "UPDATE run_waits SET status = 'cancelled', answered_by = ?, answered_at = ?"
                " WHERE run_id = ? AND status = 'open'", (by, now, run_id))
        if stopped:
            fields = {"by": by} if error is None else {"error": error}
            self.note(run_id, EventKind.GRAPH_END, status=status, **fields)
        return bool(stopped)

    def add_ended(self, runs: Iterable[RunInfo]) -> None:
        """Write runs that ended already, many at once (one statement prepared once, in the
        caller's transaction): a benchmark's million, an import."""
        self.conn.executemany(
            "INSERT INTO runs (id, workflow, status, input, meta, max_steps, route, error,"
            " started_at, updated_at, ended_at) VALUES (?, ?, ?, '{}', ?, 0, ?, ?, ?, ?, ?)",
            ((run.id, run.workflow, run.status, dumps(run.meta), run.route, run.error,
              run.started_at, run.ended_at or run.started_at, run.ended_at) for run in runs))

    def add_events(self, events: Iterable[tuple[str, int, float, str, str | None, str]]) -> None:
        """Write events (run id, seq, t, kind, node, data JSON) many at once: a benchmark's."""
        self.conn.executemany("INSERT INTO run_events (run_id, seq, t, event, node, data)"
                              " VALUES (?, ?, ?, ?, ?, ?)", events)

    def ended_after(self, since: float, before: float, skip: int) -> float | None:
        """The end time of the ended run ``skip`` places after the first that ended at or
        after ``since`` and before ``before`` (along ``runs_by_end``); None: fewer are there.
        A prune in batches takes its cut-offs from it (``+status``: never along the status
        index, which would sort every ended run for each cut-off)."""
        row = self.conn.execute(
            "SELECT ended_at FROM runs WHERE ended_at >= ? AND ended_at < ? AND +status IN"
            " ('completed', 'failed', 'cancelled') ORDER BY ended_at LIMIT 1 OFFSET ?",
            (since, before, skip)).fetchone()
        return None if row is None else float(row[0])

    def prune(self, before: datetime) -> dict[str, int]:
        """Remove the runs that ended before ``before`` with their events, waits and steps
        (a run still running or waiting is never touched); the rows removed, per table."""
        # along runs_by_end (``+status``: the status index would visit every ended run, and a
        # prune in batches asks once a batch)
        ended = ("SELECT id FROM runs WHERE +status IN ('completed', 'failed', 'cancelled')"
                 " AND ended_at < ?")
        cutoff = (before.timestamp(),)
        removed: dict[str, int] = {}
        with self.transaction():
            for table in ("run_events", "run_waits", "run_steps"):  # before their runs
                removed[table] = self.conn.execute(
                    f"DELETE FROM {table} WHERE run_id IN ({ended})", cutoff).rowcount
            removed["runs"] = self.conn.execute(
                "DELETE FROM runs WHERE id IN (" + ended + ")", cutoff).rowcount
        return removed

    # -- waits -----------------------------------------------------------------------------

    def answer(self, run_id: str, key: str, answer: Any, by: str,
               reply_key: str | None = None) -> bool:
        """Answer the open wait ``key``; False when it was not open (answered, expired...).

        ``reply_key`` names the reply the answer owes its chat (``owed_replies``)."""
        return bool(self.conn.execute(
            "UPDATE run_waits SET status = 'answered', answer = ?, answered_by = ?,"
            " answered_at = ?, reply_key = ? WHERE run_id = ? AND key = ? AND status = 'open'",
            (json.dumps(answer, ensure_ascii=False), by, time.time(), reply_key, run_id,
             key)).rowcount)

    def expire(self, run_id: str, key: str, now: float | None = None) -> bool:
        """Close an open wait as expired; False when it was not open."""
        return bool(self.conn.execute(
            "UPDATE run_waits SET status = 'expired', answered_at = ? WHERE run_id = ?"
            " AND key = ? AND status = 'open'", (now or time.time(), run_id, key)).rowcount)

    def withdraw(self, run_id: str, node: str) -> None:
        """Cancel a node's open waits: its question changed, so the old one is outdated."""
        self.conn.execute("UPDATE run_waits SET status = 'cancelled', answered_at = ? WHERE"
                          " run_id = ? AND node = ? AND status = 'open'",
                          (time.time(), run_id, node))

    def take(self, run_id: str, key: str) -> None:
        """The run has used this answer (outside a node boundary: a code workflow's ask)."""
        self.conn.execute("UPDATE run_waits SET taken_at = ? WHERE run_id = ? AND key = ?",
                          (time.time(), run_id, key))

    # -- a code workflow's steps -----------------------------------------------------------

    def start_step(self, run_id: str, key: str, kind: str, fingerprint: str,
                   parts: dict[str, str], cell: tuple[str, str, str] | None = None,
                   status: str = "running", group: str | None = None) -> None:
        """A call begins (or begins again: a re-run replaces the old row)."""
        pipeline = cell[0] if cell else None  # a code workflow's pipeline cell, if any
        item = cell[1] if cell else None
        stage = cell[2] if cell else None
        self.conn.execute(
            "INSERT OR REPLACE INTO run_steps (run_id, key, kind, status, fingerprint, parts,"
            " pipeline, item, stage, started_at, step_group) VALUES (?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?)", (run_id, key, kind, status, fingerprint, json.dumps(parts), pipeline,
                          item, stage, time.time(), group))

    def finish_step(self, run_id: str, key: str, output_json: str) -> None:
        self.conn.execute("UPDATE run_steps SET status = 'done', output = ?, error = NULL,"
                          " ended_at = ? WHERE run_id = ? AND key = ?",
                          (output_json, time.time(), run_id, key))

    def save_step(self, run_id: str, key: str, kind: str, output_json: str,
                  pipeline: str | None = None) -> None:
        """A step recorded done at once (a model turn inside a node, a shape: one write)."""
        now = time.time()
        self.conn.execute(
            "INSERT OR REPLACE INTO run_steps (run_id, key, kind, status, fingerprint, parts,"
            " output, pipeline, started_at, ended_at) VALUES (?, ?, ?, 'done', '', '{}', ?, ?,"
            " ?, ?)", (run_id, key, kind, output_json, pipeline, now, now))

    def mark_step(self, run_id: str, key: str, status: str, error: str | None = None) -> None:
        ended = time.time() if status in ("failed", "cancelled") else None
        self.conn.execute("UPDATE run_steps SET status = ?, error = ?, ended_at = ?"
                          " WHERE run_id = ? AND key = ?", (status, error, ended, run_id, key))

    def shape(self, run_id: str, name: str, kind: str, shape: dict[str, Any]) -> None:
        """A pipeline's or a parallel group's shape, so pending parts show too."""
        self.save_step(run_id, name, kind, json.dumps(shape, ensure_ascii=False), pipeline=name)


def _delta_json(delta: GraphState, events: list[dict[str, Any]]) -> str:
    """What a node wrote, as JSON; else a GraphRunError naming the node and the key."""
    try:
        return dumps(delta)
    except _NOT_JSON:
        node = next((e.get("node") for e in events if e["event"] == EventKind.NODE_END), "?")
        return _json_or_raise(delta, f"node {node!r} wrote")


def _json_or_raise(values: dict[str, Any], owner: str) -> str:
    """``values`` as JSON, or a GraphRunError naming the owner and the first bad key."""
    try:
        return dumps(values)
    except _NOT_JSON as exc:
        bad = next((k for k, v in values.items() if not _is_json(v)), "?")
        raise GraphRunError(f"{owner} {bad!r}: a {type(values.get(bad)).__name__} is not plain "
                            "JSON (store str, numbers, bools, None, lists, dicts)") from exc


def _is_json(value: Any) -> bool:
    try:
        dumps(value)
    except _NOT_JSON:
        return False
    return True

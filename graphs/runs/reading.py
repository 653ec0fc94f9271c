"""Reading the run tables: runs, events, waits, steps, and a run's record to continue it from.

``RunStore`` (``graphs.runs.store``) is these reads plus the writes; the reads are apart so
the dashboard's read-only connection and the lists of ``frontdesk runs`` use the same code.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any, cast

from graphs.events import EventKind
from graphs.graph import GraphRunError, RunStatus
from graphs.runs.records import RunInfo, RunRecord, StepRow, WaitInfo
from graphs.trace import cost_totals

_WAIT_COLUMNS = ("SELECT w.run_id, w.key, w.node, w.question, w.options, w.status, w.created_at,"
                 " w.expires_at, w.answer, w.answered_by, w.answered_at, r.workflow, r.meta,"
                 " w.taken_at, w.reply_key FROM run_waits w JOIN runs r ON r.id = w.run_id")
_STEP_COLUMNS = ("SELECT key, kind, status, fingerprint, parts, output, error, started_at,"
                 " ended_at, pipeline, item, stage, step_group FROM run_steps")


class RunReading:
    """The reads of the run store, on one connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def next_seq(self, run_id: str) -> int:
        row = self.conn.execute("SELECT MAX(seq) FROM run_events WHERE run_id = ?",
                                (run_id,)).fetchone()
        return 0 if row[0] is None else int(row[0]) + 1

    # -- runs ------------------------------------------------------------------------------

    def run(self, run_id: str) -> RunInfo | None:
        rows = self._runs("WHERE id = ?", (run_id,))
        return rows[0] if rows else None

    def runs(self, limit: int = 20, status: str | None = None,
             before: float | None = None) -> list[RunInfo]:
        """The most recent runs first (optionally only those with ``status``, or started
        before ``before``: the next page), read along an index whatever the table's size."""
        terms = [(term, value) for term, value in (("status = ?", status),
                                                   ("started_at < ?", before)) if value]
        where = "WHERE " + " AND ".join(term for term, _ in terms) if terms else ""
        args = tuple(value for _, value in terms)
        return self._runs(f"{where} ORDER BY started_at DESC, rowid DESC LIMIT ?", (*args, limit))

    def open_run_ids(self) -> set[str]:
        """The runs still running or waiting: what the retention never removes, nor the
        rows of other stores that point at them."""
        rows = self.conn.execute("SELECT id FROM runs WHERE status IN ('running', 'waiting')")
        return {str(row[0]) for row in rows}

    def _runs(self, clause: str, args: tuple[Any, ...]) -> list[RunInfo]:
        rows = self.conn.execute(
            "SELECT id, workflow, status, route, error, meta, started_at, ended_at FROM runs "
            + clause, args).fetchall()
        return [RunInfo(r[0], r[1], r[2], r[3], r[4], json.loads(r[5]), r[6], r[7])
                for r in rows]

    def record(self, run_id: str) -> RunRecord:
        """What the run needs to continue: state, last frontier, visits, untaken answers."""
        row = self.conn.execute("SELECT workflow, status, input, meta, max_steps FROM runs"
                                " WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise GraphRunError(f"there is no run {run_id!r}")
        workflow, status = row[0], row[1]
        input_json, meta_json = row[2], row[3]
        max_steps = row[4]
        state = json.loads(input_json)
        frontier: dict[str, Any] = {}
        visits: dict[str, int] = {}
        for delta, front in self.conn.execute(
                "SELECT delta, frontier FROM run_events WHERE run_id = ? AND"
                " (delta IS NOT NULL OR frontier IS NOT NULL) ORDER BY seq", (run_id,)):
            if delta is not None:
                state.update(json.loads(delta))
            if front is not None:
                frontier = json.loads(front)
                visits.update(frontier.get("visits", {}))
        waits = {w.key: w for w in self.waits(None, run_id)}
        waiting = {node: waits[key] for node, key in frontier.get("waiting", {}).items()
                   if key in waits}
        answers = {w.node: w for w in waits.values() if _untaken(w)}
        return RunRecord(run_id, workflow, cast(RunStatus, status), json.loads(input_json),
                         json.loads(meta_json), int(max_steps), state,
                         list(frontier.get("ready", [])), waiting,
                         visits, answers, self.reruns(run_id))

    def reruns(self, run_id: str) -> set[str]:
        """The re-run choices recorded for a run (``rerun`` events)."""
        chosen: set[str] = set()
        for (data,) in self.conn.execute("SELECT data FROM run_events WHERE run_id = ? AND"
                                         " event = 'rerun'", (run_id,)):
            chosen.update(json.loads(data).get("steps", []))
        return chosen

    def recoveries(self, run_id: str) -> int:
        """How often recovery has taken the run up (``recovered`` events)."""
        row = self.conn.execute("SELECT COUNT(*) FROM run_events WHERE run_id = ? AND"
                                " event = 'recovered'", (run_id,)).fetchone()
        return int(row[0])

    def untaken(self, run_id: str) -> list[WaitInfo]:
        """The run's answered (or expired) waits that it has not used yet."""
        return [wait for wait in self.waits(None, run_id) if _untaken(wait)]

    def with_untaken_answers(self) -> list[str]:
        """Waiting runs holding an answer they have not used (given while they still ran)."""
        return [run_id for (run_id,) in self.conn.execute(
            "SELECT DISTINCT w.run_id FROM run_waits w JOIN runs r ON r.id = w.run_id"
            " WHERE r.status = 'waiting' AND w.status IN ('answered', 'expired')"
            " AND w.taken_at IS NULL")]

    def last_run(self, workflow: str) -> RunInfo | None:
        """The most recent run of ``workflow``."""
        found = self._runs("WHERE workflow = ? ORDER BY started_at DESC, rowid DESC LIMIT 1",
                           (workflow,))
        return found[0] if found else None

    def messages_of(self, user: str, since: float, *, but: str = "") -> int:
        """How many messages the runs of ``user`` (their meta's ``user``) started since
        ``since`` answered: a burst's lines each count; runs of workflow ``but`` left out.
        Read through the runs' start index, so the cost is the runs of that hour."""
        row = self.conn.execute(
            "SELECT COALESCE(SUM(COALESCE(json_array_length(meta, '$.messages'), 1)), 0)"
            " FROM runs WHERE started_at >= ? AND workflow != ?"
            " AND json_extract(meta, '$.user') = ?", (since, but, user)).fetchone()
        return int(row[0])

    def spent_by(self, user: str, since: float, started_after: float) -> float:
        """USD of the model calls recorded since ``since`` by the runs of ``user`` started
        after ``started_after`` (a run may wait hours for an answer and call a model after)."""
        row = self.conn.execute(
            "SELECT COALESCE(SUM(json_extract(e.data, '$.cost_usd')), 0) FROM runs r"
            " JOIN run_events e ON e.run_id = r.id WHERE r.started_at >= ?"
            " AND json_extract(r.meta, '$.user') = ? AND e.event = ? AND e.t >= ?",
            (started_after, user, EventKind.MODEL_CALL.value, since)).fetchone()
        return float(row[0])

    # -- events ----------------------------------------------------------------------------

    def events(self, run_id: str) -> list[dict[str, Any]]:
        """The run's events in order, as the observer saw them."""
        rows = self.conn.execute("SELECT event, node, t, data FROM run_events WHERE run_id = ?"
                                 " ORDER BY seq", (run_id,)).fetchall()
        return [{"event": kind, **({"node": node} if node is not None else {}),
                 **json.loads(data), "run_id": run_id, "t": t} for kind, node, t, data in rows]

    def frontiers(self, run_id: str) -> list[tuple[float, dict[str, Any]]]:
        """Each recorded frontier with its time, in order (the dashboard's timeline)."""
        return [(t, json.loads(front)) for t, front in self.conn.execute(
            "SELECT t, frontier FROM run_events WHERE run_id = ? AND frontier IS NOT NULL"
            " ORDER BY seq", (run_id,))]

    def costs(self, run_id: str) -> dict[str, Any]:
        """Model calls of a run: count per role, tokens and cost in USD."""
        return cost_totals(self.events(run_id))

    # -- waits -----------------------------------------------------------------------------

    def waits(self, status: str | None = "open", run_id: str | None = None) -> list[WaitInfo]:
        """Waits with their run's workflow and meta, oldest first (default: still open)."""
        clauses = [c for c, v in (("w.status = ?", status), ("w.run_id = ?", run_id)) if v]
        return self._waits(" WHERE " + " AND ".join(clauses) if clauses else "",
                           tuple(v for v in (status, run_id) if v))

    def wait(self, run_id: str, key: str) -> WaitInfo | None:
        found = self._waits(" WHERE w.run_id = ? AND w.key = ?", (run_id, key))
        return found[0] if found else None

    def due(self, now: float) -> list[WaitInfo]:
        """Open waits whose expiry has passed, the earliest first."""
        return self._waits(" WHERE w.status = 'open' AND w.expires_at <= ?", (now,),
                           order="w.expires_at")

    def owed_replies(self, since: float) -> list[WaitInfo]:
        """Waits answered since ``since`` that owe a reply (``reply_key``) and whose run has
        stopped running: the caller checks each was queued (a crash may have come first)."""
        return self._waits(" WHERE w.reply_key IS NOT NULL AND w.answered_at >= ?"
                           " AND r.status != 'running'", (since,), order="w.answered_at")

    def _waits(self, where: str, args: tuple[Any, ...],
               order: str = "w.created_at, w.rowid") -> list[WaitInfo]:
        rows = self.conn.execute(f"{_WAIT_COLUMNS}{where} ORDER BY {order}", args).fetchall()
        return [WaitInfo(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5], r[6], r[7],
                         None if r[8] is None else json.loads(r[8]), r[9], r[10], r[11],
                         json.loads(r[12]), r[13] is not None, r[14]) for r in rows]

    # -- a code workflow's steps -----------------------------------------------------------

    def step(self, run_id: str, key: str) -> StepRow | None:
        found = self._steps(" WHERE run_id = ? AND key = ?", (run_id, key))
        return found[0] if found else None

    def steps(self, run_id: str) -> list[StepRow]:
        """A run's steps in the order they started (with pipeline and group shapes)."""
        return self._steps(" WHERE run_id = ? ORDER BY started_at, rowid", (run_id,))

    def _steps(self, where: str, args: tuple[Any, ...]) -> list[StepRow]:
        return [StepRow(r[0], r[1], r[2], r[3], json.loads(r[4]),
                        None if r[5] is None else json.loads(r[5]), r[6], r[7], r[8], r[9],
                        r[10], r[11], r[12])
                for r in self.conn.execute(_STEP_COLUMNS + where, args)]


def _untaken(wait: WaitInfo) -> bool:
    return wait.status in ("answered", "expired") and not wait.taken

"""Continue recorded runs: answer a wait, recover what a crash left running, expire, cancel.

A run is rebuilt from its log (``graphs.store``): the input plus every node's delta gives the
state, the last frontier says what was ready or waiting, and counting ``node_end`` events gives
the visits. Finished nodes never run again; a node that was in flight when the process died
runs again (at-least-once: nodes with side effects must be idempotent).

Usage::

    store = RunStore(settings.database)
    store.register(triage.build(deps))            # every workflow, by name, at start
    await recover(store)                          # continue runs a crash left running
    result = await resume(store, run_id, "Approve", by="telegram:42")
    if result.already_answered: ...               # someone answered first
    await expire_due(store)                       # now and then: overdue waits follow on_expiry
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import Any

from graphs.engine import GraphRunError, Observer, RunResult, _Run
from graphs.store import RunStore, WaitInfo

log = logging.getLogger(__name__)


async def resume(store: RunStore, run_id: str, answer: Any, by: str = "owner",
                 key: str | None = None, observer: Observer | None = None) -> RunResult:
    """Answer the run's open wait (``key``, else the oldest) and continue the run.

    A wait that was already answered (or expired, or cancelled) is left alone: the result is
    the run as it stands, with ``already_answered`` set. Of two racing answers exactly one wins.
    While the run is still running (another branch is busy), the answer is recorded and the
    run as it stands is returned: starting a second runner would run its busy nodes twice.
    The run picks the answer up once it parks (see ``_continue`` and ``expire_due``).
    """
    if store.run(run_id) is None:
        raise GraphRunError(f"there is no run {run_id!r}")
    open_waits = [w for w in store.waits("open", run_id) if key is None or w.key == key]
    if open_waits:
        claimed = store.conn.execute(
            "UPDATE run_waits SET status = 'answered', answer = ?, answered_by = ?,"
            " answered_at = ? WHERE run_id = ? AND key = ? AND status = 'open'",
            (json.dumps(answer, ensure_ascii=False), by, time.time(), run_id,
             open_waits[0].key)).rowcount
        if claimed:
            return await _continue(store, run_id, observer, ("waiting",))
    result = load(store, run_id)
    result.already_answered = True
    return result


async def recover(store: RunStore, observer: Observer | None = None) -> list[RunResult]:
    """Continue every run left ``running`` (call once at start, after registering workflows)."""
    runs = [r for r in store.runs(limit=1_000_000, status="running")]
    unknown = [r.id for r in runs if r.workflow not in store.graphs]
    if unknown:
        log.warning("not recovering runs of unregistered workflows: %s", ", ".join(unknown))
    continued = await asyncio.gather(
        *(_continue(store, r.id, observer) for r in runs if r.workflow in store.graphs),
        return_exceptions=True)
    for outcome in continued:
        if isinstance(outcome, BaseException):
            log.error("recovering a run failed: %s", outcome)
    return [r for r in continued if isinstance(r, RunResult)]


async def expire_due(store: RunStore, now: float | None = None,
                     observer: Observer | None = None) -> list[RunResult]:
    """Close open waits past their expiry; each run then follows its node's ``on_expiry``.

    Also continues waiting runs holding an answer they have not taken up: one given while
    the run was still running (see ``resume``).
    """
    now = time.time() if now is None else now
    results = [await _continue(store, run_id, observer, ("waiting",))
               for run_id in _unconsumed_answers(store)]
    due = store.conn.execute(
        "SELECT run_id, key FROM run_waits WHERE status = 'open' AND expires_at <= ?"
        " ORDER BY expires_at", (now,)).fetchall()
    for run_id, key in due:
        claimed = store.conn.execute(
            "UPDATE run_waits SET status = 'expired', answered_at = ? WHERE run_id = ?"
            " AND key = ? AND status = 'open'", (now, run_id, key)).rowcount
        if claimed:
            results.append(await _continue(store, run_id, observer, ("waiting",)))
    return results


def _unconsumed_answers(store: RunStore) -> list[str]:
    """Waiting runs whose last frontier still waits on a wait that has its answer."""
    candidates = store.conn.execute(
        "SELECT DISTINCT r.id FROM runs r JOIN run_waits w ON w.run_id = r.id"
        " WHERE r.status = 'waiting' AND w.status IN ('answered', 'expired')").fetchall()
    return [run_id for (run_id,) in candidates if _rebuild(store, run_id)[3]["answers"]]


def cancel(store: RunStore, run_id: str, by: str | None = None) -> bool:
    """Cancel a waiting or running run and close its open waits; False if it had ended."""
    now = time.time()
    store.conn.execute("BEGIN IMMEDIATE")
    try:
        cancelled = store.conn.execute(
            "UPDATE runs SET status = 'cancelled', updated_at = ?, ended_at = ? WHERE id = ?"
            " AND status IN ('running', 'waiting')", (now, now, run_id)).rowcount
        store.conn.execute(
            "UPDATE run_waits SET status = 'cancelled', answered_by = ?, answered_at = ?"
            " WHERE run_id = ? AND status = 'open'", (by, now, run_id))
        store.conn.execute("COMMIT")
    except BaseException:
        store.conn.execute("ROLLBACK")
        raise
    if cancelled:
        store._seq.pop(run_id, None)  # others may have written since: read it again
        store.append(run_id, [{"event": "graph_end", "status": "cancelled", "by": by,
                               "run_id": run_id, "t": now}])
    return bool(cancelled)


def load(store: RunStore, run_id: str) -> RunResult:
    """The run's state rebuilt from its log, with ``status``, open ``waits`` and ``meta``."""
    return _rebuild(store, run_id)[0]


def _rebuild(store: RunStore, run_id: str) -> tuple[RunResult, str, int, dict[str, Any]]:
    """State, workflow name, max_steps and the frontier (ready, waiting, visits, answers)."""
    row = store.conn.execute("SELECT workflow, status, input, meta, max_steps FROM runs"
                             " WHERE id = ?", (run_id,)).fetchone()
    if row is None:
        raise GraphRunError(f"there is no run {run_id!r}")
    workflow, status, state_json, meta_json, max_steps = row
    state = RunResult(json.loads(state_json), json.loads(meta_json))
    state.run_id, state.status = run_id, status
    frontier: dict[str, Any] = {"ready": [], "waiting": {}}
    visits: dict[str, int] = {}
    for kind, node, data, delta, front in store.conn.execute(
            "SELECT event, node, data, delta, frontier FROM run_events WHERE run_id = ? AND"
            " (delta IS NOT NULL OR frontier IS NOT NULL OR event = 'node_end') ORDER BY seq",
            (run_id,)):
        if delta is not None:
            state.update(json.loads(delta))
        if front is not None:
            frontier = json.loads(front)
        if kind == "node_end" and node:
            fields = json.loads(data)
            if fields.get("attempt", 1) >= 1 and "retry_in" not in fields:  # one visit
                visits[node] = visits.get(node, 0) + 1
    waits = {w.key: w for w in store.waits(None, run_id)}
    waiting = {node: _wait_info(waits[key]) for node, key in frontier["waiting"].items()
               if key in waits}
    answers = {node: _answer(waits[key]) for node, key in frontier["waiting"].items()
               if key in waits and waits[key].status in ("answered", "expired")}
    state.waits = [info for node, info in waiting.items() if node not in answers]
    return state, workflow, int(max_steps), {"ready": frontier["ready"], "waiting": waiting,
                                             "visits": visits, "answers": answers}


def _wait_info(wait: WaitInfo) -> dict[str, Any]:
    return {"run_id": wait.run_id, "node": wait.node, "key": wait.key,
            "question": wait.question, "options": wait.options, "expires_at": wait.expires_at}


def _answer(wait: WaitInfo) -> dict[str, Any]:
    if wait.status == "expired":
        return {"expired": True}
    return {"answer": wait.answer, "by": wait.answered_by}


async def _continue(store: RunStore, run_id: str, observer: Observer | None,
                    from_status: tuple[str, ...] = ("running", "waiting")) -> RunResult:
    """Mark the run running again and pick it up from its frontier.

    Recovery continues ``running`` runs (their runner died); answers and expiries continue
    only ``waiting`` ones, so a live runner is never doubled. Claiming is one UPDATE: of two
    processes continuing the same run, one does.
    """
    marks = ", ".join("?" * len(from_status))
    claimed = store.conn.execute(
        f"UPDATE runs SET status = 'running', updated_at = ? WHERE id = ? AND status IN ({marks})",
        (time.time(), run_id, *from_status)).rowcount
    state, workflow, max_steps, frontier = _rebuild(store, run_id)
    if not claimed:  # cancelled, ended, or still running: nothing to continue here
        return state
    graph = store.graphs.get(workflow)
    if graph is None:
        raise GraphRunError(f"workflow {workflow!r} of run {run_id!r} is not registered: "
                            "call store.register(graph) at start")
    store._seq[run_id] = store.next_seq(run_id)
    continue_run = getattr(graph, "continue_run", None)
    if continue_run is not None:  # a code workflow (graphs.flows) runs its function again
        flow_result: RunResult = await continue_run(store, run_id, observer)
        return flow_result
    run = _Run(graph, state, observer, store, max_steps)
    run.restore(frontier["ready"], frontier["waiting"], frontier["visits"], frontier["answers"])
    run.emit("graph_start", workflow=workflow, resumed=True)
    run.record()
    result = await run.go()
    if result.status == "waiting" and _rebuild(store, run_id)[3]["answers"]:
        return await _continue(store, run_id, observer, ("waiting",))  # answered meanwhile
    return result

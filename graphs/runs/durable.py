"""The rules of continuing a recorded run: answer a wait, recover, expire, cancel, re-run.

``Runs`` pairs the store (``graphs.runs.store``) with the registry of workflows
(``graphs.runs.protocol``). Each rule decides *whether* a run continues, claims it with one
UPDATE (of two processes continuing the same run, one does) and hands the stored record to
its workflow's ``proceed``. Finished nodes and steps never run again; a node that was in
flight when the process died runs again (at-least-once: side effects must be idempotent).

Usage::

    runs = Runs(RunStore(db), traces_dir=settings.traces_dir)  # db: the one Database
    runs.register(triage.build(deps))             # every workflow, by name, at start
    await runs.recover()                          # continue runs a crash left running
    result = await runs.resume(run_id, "Approve", by="telegram:42")
    if result.already_answered: ...               # someone answered first
    await runs.expire_due()                       # now and then: overdue waits follow on_expiry

With ``traces_dir``, each time a run stops moving here (finished, failed, cancelled or
waiting) its events are exported as a JSONL trace, ``<traces_dir>/<day it started>/<run
id>.jsonl``, rewritten whole each time (``graphs.trace.export``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from graphs.events import EventKind, new_run_id
from graphs.graph import Graph, GraphRunError, Observer, RunResult, TextSink
from graphs.runs.protocol import Registry, Workflow, result_of
from graphs.runs.store import RunStore
from graphs.trace import export

MAX_TRIES = 3  # a run is tried this often (its first go, then recoveries), then failed

log = logging.getLogger(__name__)


class Runs:
    """Start and continue durable runs of the registered workflows."""

    def __init__(self, store: RunStore, registry: Registry | None = None,
                 traces_dir: Path | None = None) -> None:
        self.store = store
        self.registry = registry or Registry()
        self.traces_dir = traces_dir

    def register(self, workflow: Workflow | Graph) -> Workflow:
        """Make a workflow findable by its name, for resume and recovery in this process."""
        return self.registry.add(workflow)

    async def start(self, workflow: Workflow | Graph | str,
                    input: Mapping[str, Any] | None = None, *, run_id: str | None = None,
                    meta: Mapping[str, Any] | None = None, observer: Observer | None = None,
                    live: TextSink | None = None) -> RunResult:
        """A new run of ``workflow`` (registered first when it is an object); with the
        ``run_id`` of a run that exists already, that run as it stands (never a second).
        ``live``: where the run's answer streams as it is written (``graphs.live``)."""
        found = self._named(workflow) if isinstance(workflow, str) else self.register(workflow)
        if run_id is not None and self.store.run(run_id) is not None:
            return self.load(run_id)
        run_id = run_id or new_run_id()
        try:
            result = await found.start(self.store, input, run_id=run_id, meta=meta,
                                       observer=observer, live=live)
        except BaseException:
            self._traced(run_id)  # the run (if it began) failed: its trace says why
            raise
        if result.status == "waiting" and result.run_id and self.store.untaken(
                result.run_id):  # answered while another branch still ran: take it up now
            return await self._continue(result.run_id, observer, ("waiting",), live)
        self._traced(result.run_id)
        return result

    async def resume(self, run_id: str, answer: Any, by: str = "owner", key: str | None = None,
                     observer: Observer | None = None, reply_key: str | None = None,
                     live: TextSink | None = None) -> RunResult:
        """Answer the run's open wait (``key``, else the oldest) and continue the run.

        A wait that was already answered (or expired, or cancelled) is left alone: the result
        is the run as it stands, with ``already_answered`` set. Of two racing answers exactly
        one wins. While the run is still running (another branch is busy), the answer is
        stored and the run as it stands is returned: starting a second runner would run its
        busy nodes twice. The run takes the answer up once it parks (see ``_continue``).
        ``reply_key``: the reply the answer owes its chat, stored with it (``owed_replies``);
        ``live``: where the continued run's answer streams.
        """
        if self.store.run(run_id) is None:
            raise GraphRunError(f"there is no run {run_id!r}")
        open_waits = [w for w in self.store.waits("open", run_id) if key is None or w.key == key]
        if open_waits and self.store.answer(run_id, open_waits[0].key, answer, by, reply_key):
            return await self._continue(run_id, observer, ("waiting",), live)
        result = self.load(run_id)
        result.already_answered = True
        return result

    async def recover(self, observer: Observer | None = None) -> list[RunResult]:
        """Continue every run left ``running`` (call once at start, after registering).

        Each recovery is noted before the run goes on, so one that crashes the process every
        time (a poison run) is counted: after ``MAX_TRIES`` tries that each died, it ends as failed
        instead of keeping the bot from starting.
        """
        runs = self.store.runs(limit=1_000_000, status="running")
        unknown = [r.id for r in runs if r.workflow not in self.registry]
        if unknown:
            log.warning("not recovering runs of unregistered workflows: %s", ", ".join(unknown))
        for run in runs:
            self.store.note(run.id, EventKind.RECOVERED)
            if (died := self.store.recoveries(run.id)) >= MAX_TRIES:  # first go + recoveries
                log.error("run %s: the process died in each of its %d tries; failed", run.id,
                          died)
                self.store.stop(run.id, "failed",
                                error=f"the process died in each of its {died} tries")
                self._traced(run.id)
        continued = await asyncio.gather(
            *(self._continue(r.id, observer, ("running",)) for r in runs
              if r.workflow in self.registry), return_exceptions=True)
        for outcome in continued:
            if isinstance(outcome, BaseException):
                log.error("recovering a run failed: %s", outcome)
        return [r for r in continued if isinstance(r, RunResult)]

    async def expire_due(self, now: float | None = None,
                         observer: Observer | None = None) -> list[RunResult]:
        """Close open waits past their expiry; each run then follows its node's ``on_expiry``.

        Also continues waiting runs holding an answer they have not taken up: one given while
        the run was still running (see ``resume``).
        """
        now = time.time() if now is None else now
        results = [await self._continue(run_id, observer, ("waiting",))
                   for run_id in self.store.with_untaken_answers()]
        for wait in self.store.due(now):
            if self.store.expire(wait.run_id, wait.key, now):
                results.append(await self._continue(wait.run_id, observer, ("waiting",)))
        return results

    def cancel(self, run_id: str, by: str | None = None) -> bool:
        """Cancel a waiting or running run and close its open waits; False if it had ended."""
        return self._traced(run_id, self.store.cancel(run_id, by))

    def fail(self, run_id: str, reason: str) -> bool:
        """End a run its caller gave up on (a deadline) as failed with ``reason``."""
        return self._traced(run_id, self.store.stop(run_id, "failed", error=reason))

    async def rerun(self, run_id: str, steps: Sequence[str] = ("*",),
                    observer: Observer | None = None) -> RunResult:
        """Continue a code workflow's run, running again the named changed steps ('*': all).

        The choice is recorded with the run (a ``rerun`` event), so a later resume keeps it.
        """
        run = self.store.run(run_id)
        workflow = None if run is None else self.registry.get(run.workflow)
        if run is None or workflow is None or workflow.runtime != "code":
            raise GraphRunError(f"run {run_id!r} is not a run of a registered code workflow")
        if not self.store.reopen(run_id, list(steps)):
            return self.load(run_id)
        try:
            return await workflow.proceed(self.store, self.store.record(run_id), observer)
        finally:
            self._traced(run_id)

    def load(self, run_id: str) -> RunResult:
        """The run's state rebuilt from its record, with ``status``, open ``waits``, ``meta``."""
        return result_of(self.store.record(run_id))

    def _named(self, name: str) -> Workflow:
        workflow = self.registry.get(name)
        if workflow is None:
            raise GraphRunError(f"workflow {name!r} is not registered: call runs.register(...) "
                                "at start")
        return workflow

    async def _continue(self, run_id: str, observer: Observer | None,
                        from_status: tuple[str, ...],
                        live: TextSink | None = None) -> RunResult:
        """Claim the run (running again) and let its workflow proceed from the record.

        Recovery continues ``running`` runs (their runner died); answers and expiries continue
        only ``waiting`` ones, so a live runner is never doubled. A run that parks while an
        answer came in meanwhile is continued again at once.
        """
        if not self.store.claim(run_id, from_status):  # cancelled, ended, or being run
            return self.load(run_id)
        record = self.store.record(run_id)
        try:
            result = await self._named(record.workflow).proceed(self.store, record, observer,
                                                                live)
        except BaseException:
            self._traced(run_id)
            raise
        given = {wait.key for wait in record.answers.values()}
        if result.status == "waiting" and any(  # an answer came in while it ran: take it up
                wait.key not in given for wait in self.store.untaken(run_id)):
            return await self._continue(run_id, observer, ("waiting",), live)
        self._traced(run_id)
        return result

    def _traced(self, run_id: str | None, moved: bool = True) -> bool:
        """The run stopped moving: (re)write its JSONL trace, when traces are kept."""
        run = None if run_id is None or self.traces_dir is None else self.store.run(run_id)
        if moved and run is not None and self.traces_dir is not None:
            try:
                export(self.traces_dir, run.id, self.store.events(run.id), run.started_at)
            except OSError as exc:  # a full disk must not fail the run
                log.warning("could not write the trace of run %s: %s", run.id, exc)
        return moved

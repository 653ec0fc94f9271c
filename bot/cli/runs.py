"""`frontdesk runs [RUN_ID]`: list recent runs, or show one run's events as a timeline.

The list ends with what failed for good and is never retried: inbox messages that could not
be read, outbox parts the platform refused (a short section, only when there are any).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from typing import Any

from bot.config.settings import Settings
from bot.config.text import shown
from bot.delivery.inbox import Failure, Inbox
from bot.delivery.parts import OutboxParts
from bot.schema import open_database
from graphs.codefirst import flow_view, matrix_text
from graphs.events import EventKind
from graphs.runs import RunInfo, RunStore

_SKIP = {"event", "run_id", "t", "node"}


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Print the list, or one run; exit 1 when the run id is unknown."""
    if not settings.database.exists():
        print("No runs yet.")
        return 0
    with open_database(settings.database) as db:  # the run store and the failures, no more
        store = RunStore(db)
        if args.run_id:
            return show(store, args.run_id)
        limit = getattr(args, "limit", 20)
        runs = store.runs(limit=limit, before=getattr(args, "before", None))
        if not runs:
            print("No runs yet.")
        for run in runs:
            print(shown(list_line(run), "terminal"))
        if len(runs) == limit:  # there may be more: the next page's argument
            print(f"more: frontdesk runs --before {runs[-1].started_at!r}")
        print_failures(Inbox(db), OutboxParts(db))
        return 0


def print_failures(inbox: Inbox, parts: OutboxParts) -> None:
    """The messages and parts that failed for good, newest first."""
    failures = sorted([*inbox.failures(10), *parts.failures(10)],
                      key=lambda failure: failure.at, reverse=True)[:10]
    if failures:
        print("\nfailed for good (not retried):")
    for failure in failures:
        print(shown(failure_line(failure), "terminal"))


def failure_line(failure: Failure) -> str:
    """kind, platform/chat, which item, when, and why, on one line."""
    return (f"  {failure.kind:<7} {failure.platform}/{failure.chat_id} {failure.item}  "
            f"{_clock(failure.at)}  {failure.error}")


def list_line(run: RunInfo) -> str:
    """id, workflow, status, route, duration and start time on one line."""
    took = "-" if run.duration_s is None else f"{run.duration_s:.2f}s"
    return (f"{run.id}  {run.workflow:<12} {run.status:<9} route={run.route or '-':<12} "
            f"{took:>8}  {_clock(run.started_at)}")


def show(store: RunStore, run_id: str) -> int:
    run = store.run(run_id)
    if run is None:
        print(f"frontdesk runs: there is no run {run_id!r}; `frontdesk runs` lists them.",
              file=sys.stderr)
        return 1
    print(shown(list_line(run), "terminal"))
    if run.meta:
        print(shown("meta: " + json.dumps(run.meta, ensure_ascii=False), "terminal"))
    events = store.events(run_id)
    start = events[0]["t"] if events else run.started_at
    for event in events:
        print(shown(f"  +{event['t'] - start:8.3f}s  {timeline_line(event)}", "terminal"))
    for wait in store.waits(status="open", run_id=run_id):
        options = f" [{' / '.join(wait.options)}]" if wait.options else ""
        print(shown(f"waiting on {wait.key}: {wait.question}{options}", "terminal"))
    costs = store.costs(run_id)
    if costs["calls"]:
        print(f"model calls: {costs['calls']}, tokens in/out {costs['input_tokens']}/"
              f"{costs['output_tokens']}, ${costs['cost_usd']:.4f}")
    for grid in flow_view(store.steps(run_id))["pipelines"]:  # code workflows' pipelines
        print(matrix_text(grid))
    return 0


def timeline_line(event: dict[str, Any]) -> str:
    """One event, readable: kind, node, then the fields that matter."""
    kind, node = event["event"], event.get("node")
    if kind == EventKind.NODE_END:
        detail = (f"error: {event['error']}" if event.get("error")
                  else f"wrote {', '.join(event.get('wrote', [])) or 'nothing'}")
        retry = f", retry in {event['retry_in']}s" if "retry_in" in event else ""
        return (f"node_end    {node} ({event.get('duration_s', 0.0):.3f}s, attempt "
                f"{event.get('attempt')}) {detail}{retry}")
    if kind == EventKind.ROUTE:
        return f"route       {event.get('router')} -> {event.get('target')} ({event.get('label')})"
    if kind == EventKind.WAIT:
        return f"wait        {node}: {event.get('question')}"
    extra = {k: v for k, v in event.items() if k not in _SKIP}
    fields = " ".join(f"{k}={v}" for k, v in extra.items())
    return f"{kind:<11} {node or ''} {fields}".rstrip()


def _clock(t: float) -> str:
    return dt.datetime.fromtimestamp(t).strftime("%Y-%m-%d %H:%M:%S")

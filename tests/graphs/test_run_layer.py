"""One run layer for both runtimes: the event vocabulary, the step log, the trace export."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from graphs import END, START, Graph, Node, run_graph
from graphs.checkpoints import NO_FINGERPRINT, StepLog, fingerprint
from graphs.codefirst import step, workflow
from graphs.events import EventKind, describe, new_run_id
from graphs.graph import reach_from
from graphs.nodes import human_node
from graphs.runs import Runs, RunStore
from graphs.trace import daily_path, export, read_jsonl

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = RunStore.open(tmp_path / "runs.db")
    yield opened
    opened.db.close()


def approval() -> Graph:
    async def draft(state: dict[str, Any]) -> dict[str, Any]:
        return {"draft": f"Hello {state['to']}"}

    graph = Graph("approval")
    graph.add_node(Node("draft", draft))
    graph.add_node(human_node("Send it?", "decision", ["Approve", "Discard"], name="approval"))
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "approval")
    graph.add_edge("approval", END)
    return graph


@workflow(name="doubled")
async def doubled(n: int) -> dict[str, int]:
    def double(x: int) -> int:
        return 2 * x
    return {"twice": await step(double, n)}


def test_the_event_kinds_are_todays_strings() -> None:
    assert [kind.value for kind in EventKind] == [
        "graph_start", "graph_end", "node_start", "node_end", "route", "wait", "step_rerun",
        "rerun", "recovered", "model_call", "tool_call", "loop_end", "first_token", "first_visible",
        "speculation"]
    assert EventKind.NODE_END == "node_end" and f"{EventKind.WAIT}" == "wait"


async def test_every_stored_event_of_both_runtimes_is_a_listed_kind(store: RunStore) -> None:
    runs = Runs(store)
    waiting = await runs.start(approval(), {"to": "Ann"})
    await runs.resume(waiting.run_id or "", "Approve")
    coded = await runs.start(doubled, {"n": 4})
    assert coded["twice"] == 8
    for run_id in (waiting.run_id, coded.run_id):
        kinds = {event["event"] for event in store.events(run_id or "")}
        assert kinds <= set(EventKind) and {"graph_start", "graph_end"} <= kinds


def test_no_bare_event_kind_strings_in_graphs() -> None:
    """Every event kind is written as ``EventKind.X`` in graphs/, never as a bare string."""
    kinds = "|".join(kind.value for kind in EventKind)
    bare = re.compile(rf"""(emit|note)\((\w+(\.\w+)*, )?["']({kinds})["']"""
                      rf"""|[=!]= ["']({kinds})["']|\(["']({kinds})["'],""")
    offences = [f"{path.relative_to(ROOT)}:{n}" for path in sorted((ROOT / "graphs").rglob("*.py"))
                for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if bare.search(line)]
    assert offences == []


def test_one_error_formatter_and_one_run_id_maker() -> None:
    assert describe(ValueError("bad input")) == "ValueError: bad input"
    assert describe(TimeoutError()) == "TimeoutError"
    made = {new_run_id() for _ in range(100)}
    assert len(made) == 100 and all(re.fullmatch(r"[0-9a-f]{16}", m) for m in made)


async def test_a_code_run_and_a_graph_run_record_their_ends_alike(store: RunStore) -> None:
    graph_run = await run_graph(approval(), {"to": "Bo"}, store=store)
    code_run = await Runs(store).start(doubled, {"n": 1})
    for result in (graph_run, code_run):
        end = store.events(result.run_id or "")[-1]
        assert end["event"] == "graph_end" and end["status"] == result.status
    (wait,) = graph_run.waits
    assert store.frontiers(graph_run.run_id or "")[-1][1]["waiting"] == {
        "approval": wait["key"]}


def test_the_step_log_compares_fingerprints_for_node_steps_too(store: RunStore) -> None:
    store.conn.execute(
        "INSERT INTO runs (id, workflow, status, input, meta, max_steps, started_at, updated_at)"
        " VALUES ('r1', 'w', 'running', '{}', '{}', 1, 0, 0)")
    log = StepLog(store, "r1", "agent:1/")
    parts = {"messages": [{"role": "user", "content": "hi"}]}
    assert not log.replay("turn:1", parts).done
    log.begin("turn:1", "model_turn", fingerprint(parts))
    log.done("turn:1", {"text": "hello"})
    again = log.replay("turn:1", parts)
    assert again.done and again.output == {"text": "hello"}
    changed = log.replay("turn:1", {"messages": []})
    assert changed.stale and changed.changed == ["messages"] and not changed.done
    log.save("turn:2", "model_turn", {"text": "plain"})  # without a fingerprint, as before
    row = log.saved("turn:2")
    assert row is not None and row.fingerprint == NO_FINGERPRINT.value
    assert log.effect_key("tool:1") == "r1/agent:1/tool:1"


async def test_runs_export_the_trace_each_time_a_run_stops_moving(
        store: RunStore, tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    runs = Runs(store, traces_dir=traces)
    waiting = await runs.start(approval(), {"to": "Cy"})
    run_id = waiting.run_id or ""
    info = store.run(run_id)
    assert info is not None
    path = daily_path(traces, run_id, info.started_at)
    assert [e["event"] for e in read_jsonl(path)][-2:] == ["wait", "graph_end"]
    await runs.resume(run_id, "Approve")
    written = path.read_bytes()
    assert read_jsonl(path)[-1]["status"] == "completed"
    assert read_jsonl(path) == store.events(run_id)
    assert export(traces, run_id, store.events(run_id), info.started_at) == path
    assert path.read_bytes() == written  # written again: the same file
    assert [p.name for p in traces.rglob("*") if p.is_file()] == [f"{run_id}.jsonl"]

    cancelled = await runs.start(approval(), {"to": "Di"})
    assert runs.cancel(cancelled.run_id or "", by="owner")
    info = store.run(cancelled.run_id or "")
    assert info is not None
    last = read_jsonl(daily_path(traces, info.id, info.started_at))[-1]
    assert (last["event"], last["status"]) == ("graph_end", "cancelled")


async def test_without_a_traces_dir_nothing_is_written(store: RunStore, tmp_path: Path) -> None:
    await Runs(store).start(approval(), {"to": "Ed"})
    assert [p for p in tmp_path.rglob("*.jsonl")] == []


def test_reach_from_follows_the_edges() -> None:
    edges = {"a": ["b"], "b": ["c", "a"], "c": [], "d": ["a"]}
    assert reach_from("a", edges) == {"a", "b", "c"}
    assert reach_from("c", edges) == set()

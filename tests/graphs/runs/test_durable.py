"""Durable runs: SIGKILL at each point, resume in another process, answers, expiry, storage."""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from graphs import END, START, Graph, GraphRunError, GraphWorkflow, Node, RunContext, run_graph
from graphs.nodes import human_node, route_on
from graphs.runs import Runs, RunStore
from graphs.trace import read_jsonl, write_jsonl
from tests.support.crashing import finish, kill_when_ready, ran, start_worker
from tests.support.polling import until

WORKER = Path(__file__).with_name("crash_worker.py")


def worker(tmp_path: Path, mode: str, *extra: str) -> subprocess.Popen[str]:
    return start_worker(WORKER, tmp_path, mode, *extra)


EXPECTED = {"input": 1, "a": "a done", "b": "b done", "c": "c done", "decision": "yes",
            "trail": ["a", "b", "c"]}


@pytest.mark.parametrize(("crash_point", "b_runs"), [("between", 1), ("inside", 2)])
def test_killed_mid_run_then_recovered_in_a_new_process(tmp_path: Path, crash_point: str,
                                                        b_runs: int) -> None:
    kill_when_ready(tmp_path, worker(tmp_path, crash_point))
    recovered = finish(worker(tmp_path, "recover"))
    assert [r["status"] for r in recovered] == ["waiting"]
    assert ran(tmp_path) == {"a": 1, "b": b_runs}  # a finished before: never again
    done = finish(worker(tmp_path, "resume", "yes"))
    assert done["status"] == "completed" and done["already_answered"] is False
    state = done["state"]
    assert {k: state[k] for k in EXPECTED} == EXPECTED and state["decision_by"].startswith("pid:")
    assert ran(tmp_path) == {"a": 1, "b": b_runs, "c": 1}


def test_killed_while_waiting_then_answered_from_another_process(tmp_path: Path) -> None:
    kill_when_ready(tmp_path, worker(tmp_path, "waiting"))
    assert finish(worker(tmp_path, "recover")) == []  # a waiting run needs no recovery
    done = finish(worker(tmp_path, "resume", "yes"))
    assert done["status"] == "completed"
    assert {k: done["state"][k] for k in EXPECTED} == EXPECTED
    assert ran(tmp_path) == {"a": 1, "b": 1, "c": 1}


def test_racing_answers_from_two_processes_exactly_one_wins(tmp_path: Path) -> None:
    started = finish(worker(tmp_path, "start"))
    assert started["status"] == "waiting"
    racers = [worker(tmp_path, "resume", answer) for answer in ("yes", "no")]
    results = [finish(proc) for proc in racers]
    winners = [r for r in results if not r["already_answered"]]
    assert len(winners) == 1
    loser = next(r for r in results if r["already_answered"])
    # The loser sees the run as it stands: the winner's answer, or not yet, never its own.
    assert loser["state"].get("decision") in (None, winners[0]["state"]["decision"])
    store = RunStore.open(tmp_path / "f.db")
    assert store.run(started["run_id"]).status == "completed"  # type: ignore[union-attr]
    assert Runs(store).load(started["run_id"])["decision"] == winners[0]["state"]["decision"]
    assert ran(tmp_path)["c"] == (1 if winners[0]["state"]["decision"] == "yes" else 0)


def approval_graph(expires_after: float | None = None) -> Graph:
    graph = Graph("approval")
    graph.add_node(Node("draft", lambda s: {"draft": f"Hello {s['to']}"}))
    graph.add_node(human_node(lambda s: f"Send {s['draft']!r}?", "decision",
                              ["Approve", "Discard"], expires_after=expires_after,
                              on_expiry="too_late", name="approval", max_visits=2))
    graph.add_node(Node("send", lambda s: {"sent": s["draft"]}))
    graph.add_node(Node("too_late", lambda s: {"sent": None}))
    graph.add_edge(START, "draft")
    graph.add_edge("draft", "approval")
    graph.add_router("approval", route_on("decision"), {"Approve": "send", "Discard": END})
    return graph


@pytest.fixture
def store(tmp_path: Path) -> Any:
    opened = RunStore.open(tmp_path / "runs.db")
    yield opened
    opened.db.close()


@pytest.fixture
def runs(store: RunStore) -> Runs:
    return Runs(store)


async def test_a_human_node_waits_and_resume_continues_it(
        store: RunStore, runs: Runs) -> None:
    result = await runs.start(approval_graph(), {"to": "Ann"},
                             meta={"chat": "telegram:chat:7", "user": "telegram:42"})
    assert result.status == "waiting" and "sent" not in result
    (wait,) = result.waits
    assert (wait["node"], wait["key"], wait["question"], wait["options"]) == (
        "approval", "approval:1", "Send 'Hello Ann'?", ["Approve", "Discard"])
    (listed,) = store.waits()
    assert listed.meta == {"chat": "telegram:chat:7", "user": "telegram:42"}
    assert (listed.run_id, listed.workflow) == (result.run_id, "approval")
    assert store.run(result.run_id or "").status == "waiting"  # type: ignore[union-attr]

    done = await runs.resume(result.run_id or "", "Approve", by="telegram:42")
    assert done.status == "completed" and not done.already_answered
    assert (done["sent"], done["decision_by"]) == ("Hello Ann", "telegram:42")
    assert store.waits() == []
    again = await runs.resume(result.run_id or "", "Discard", by="telegram:42")
    assert again.already_answered and again["decision"] == "Approve"
    info = store.run(result.run_id or "")
    assert info is not None and (info.status, info.route) == ("completed", "send")


async def test_answers_racing_in_one_process_exactly_one_wins(tmp_path: Path) -> None:
    first, second = Runs(RunStore.open(tmp_path / "r.db")), Runs(RunStore.open(tmp_path / "r.db"))
    for each in (first, second):
        each.register(approval_graph())
    result = await first.start("approval", {"to": "Bo"})
    outcomes = await asyncio.gather(first.resume(result.run_id or "", "Approve", by="a"),
                                    second.resume(result.run_id or "", "Discard", by="b"))
    assert sorted(o.already_answered for o in outcomes) == [False, True]
    assert len({o["decision"] for o in outcomes}) == 1


async def test_an_expired_wait_follows_on_expiry(
        store: RunStore, runs: Runs) -> None:
    result = await runs.start(approval_graph(expires_after=60), {"to": "Cy"})
    assert await runs.expire_due(now=time.time()) == []  # not due yet
    (expired,) = await runs.expire_due(now=time.time() + 61)
    assert expired.run_id == result.run_id and expired.status == "completed"
    assert expired["sent"] is None and "WaitExpired" in expired["errors"]["approval"]
    late = await runs.resume(result.run_id or "", "Approve", by="owner")
    assert late.already_answered and "decision" not in late
    assert store.waits(status="expired")[0].key == "approval:1"


async def test_cancel_closes_the_wait(
        store: RunStore, runs: Runs) -> None:
    result = await runs.start(approval_graph(), {"to": "Di"})
    assert runs.cancel(result.run_id or "", by="telegram:42")
    assert not runs.cancel(result.run_id or "")
    assert store.run(result.run_id or "").status == "cancelled"  # type: ignore[union-attr]
    assert (await runs.resume(result.run_id or "", "Approve", by="x")).already_answered
    assert store.events(result.run_id or "")[-1]["status"] == "cancelled"


async def test_recover_continues_a_running_run_from_its_frontier(
        store: RunStore, runs: Runs) -> None:
    calls: Counter[str] = Counter()
    gate = asyncio.Event()

    def graph() -> Graph:
        built = Graph("two_steps")
        async def first(state: dict[str, Any]) -> dict[str, Any]:
            calls["first"] += 1
            return {"first": 1}
        async def second(state: dict[str, Any]) -> dict[str, Any]:
            calls["second"] += 1
            await gate.wait()
            return {"second": state["first"] + 1}
        built.add_node(Node("first", first))
        built.add_node(Node("second", second))
        built.add_edge(START, "first")
        built.add_edge("first", "second")
        return built

    task = asyncio.create_task(runs.start(graph(), {}))
    deadline = time.monotonic() + 10
    while calls["second"] == 0:  # let the run reach second (in flight), then "crash" it
        assert time.monotonic() < deadline
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    gate.set()
    (recovered,) = await runs.recover()
    assert dict(recovered) == {"first": 1, "second": 2}
    assert calls == {"first": 1, "second": 2}
    assert runs.load(recovered.run_id or "").status == "completed"


async def test_a_non_json_write_names_the_node_and_key(
        store: RunStore, runs: Runs) -> None:
    graph = Graph("bad")
    graph.add_node(Node("maker", lambda s: {"ok": 1, "when": object()}))
    graph.add_edge(START, "maker")
    with pytest.raises(GraphRunError, match=r"node 'maker' wrote 'when'.*not plain JSON"):
        await run_graph(graph, {}, store=store)
    assert store.runs()[0].status == "failed"
    with pytest.raises(GraphRunError, match="input key 'x'"):
        await run_graph(graph, {"x": {1, 2}}, store=store)


async def test_the_log_is_the_trace_and_exports_as_jsonl(
        store: RunStore, runs: Runs, tmp_path: Path) -> None:
    seen: list[dict[str, Any]] = []
    result = await runs.start(approval_graph(), {"to": "Ed"}, observer=seen.append)
    stored = store.events(result.run_id or "")
    assert stored == seen
    path = tmp_path / "trace.jsonl"
    assert write_jsonl(stored, path) == len(seen)
    assert read_jsonl(path) == stored


async def test_costs_sum_the_model_calls(
        store: RunStore, runs: Runs) -> None:
    async def agent(state: dict[str, Any], context: RunContext) -> dict[str, Any]:
        observe = context.observer()
        assert observe is not None
        observe({"event": "model_call", "role": "small", "input_tokens": 10,
                 "output_tokens": 5, "cost_usd": 0.25})
        observe({"event": "model_call", "role": "big", "input_tokens": 100,
                 "output_tokens": 50, "cost_usd": 0.5})
        return {"reply": "ok"}

    graph = Graph("costly")
    graph.add_node(Node("agent", agent))
    graph.add_edge(START, "agent")
    result = await run_graph(graph, {}, store=store)
    assert store.costs(result.run_id or "") == {"calls": {"small": 1, "big": 1},
                                                "input_tokens": 110, "output_tokens": 55,
                                                "cost_usd": 0.75}
    calls = [e for e in store.events(result.run_id or "") if e["event"] == "model_call"]
    assert [c["node"] for c in calls] == ["agent", "agent"]


async def test_storage_grows_with_bytes_written_not_steps_times_state(tmp_path: Path) -> None:
    path = tmp_path / "size.db"
    store = RunStore.open(path)
    graph = Graph("kilobytes")
    previous = START
    def kilobyte(key: str) -> Any:
        return lambda state: {key: "x" * 1024}

    for i in range(100):
        graph.add_node(Node(f"n{i}", kilobyte(f"k{i}")))
        graph.add_edge(previous, f"n{i}")
        previous = f"n{i}"
    result = await Runs(store).start(GraphWorkflow(graph, max_steps=100), {})
    assert len(result) == 100 and result.status == "completed"
    store.db.close()  # the last connection closing checkpoints the WAL into the file
    size = path.stat().st_size + (path.with_suffix(".db-wal").stat().st_size
                                  if path.with_suffix(".db-wal").exists() else 0)
    print(f"100 steps of 1 KB: {size} bytes")
    assert size < 4 * 100 * 1024, size  # a whole-state-per-step log would need ~5 MB
    reopened = RunStore.open(path)
    assert dict(Runs(reopened).load( result.run_id or "")) == dict(result)
    reopened.db.close()


def test_runs_list_with_workflow_meta_and_route(tmp_path: Path) -> None:
    async def scenario() -> list[str]:
        store = RunStore.open(tmp_path / "l.db")
        runs = Runs(store)
        ids = []
        for who in ("A", "B"):
            ids.append((await runs.start(approval_graph(), {"to": who},
                                        meta={"who": who})).run_id or "")
        await runs.resume(ids[0], "Discard", by="owner")
        listed = store.runs()
        assert [(r.id, r.status, r.meta["who"]) for r in listed] == [
            (ids[1], "waiting", "B"), (ids[0], "completed", "A")]
        assert listed[1].route == END and listed[1].duration_s is not None
        store.db.close()
        return ids

    assert len(asyncio.run(scenario())) == 2
    assert os.path.exists(tmp_path / "l.db")


async def test_two_waits_answered_while_the_run_is_still_running(
        store: RunStore, runs: Runs) -> None:
    gate, calls = asyncio.Event(), Counter[str]()

    async def busy(state: dict[str, Any]) -> dict[str, Any]:
        calls["busy"] += 1
        await gate.wait()
        return {"busy": "done"}

    def join(state: dict[str, Any]) -> dict[str, Any]:
        calls["join"] += 1
        return {"joined": [state["a"], state["b"], state["busy"]]}

    graph = Graph("two_questions")
    graph.add_node(human_node("A?", "a", name="ask_a"))
    graph.add_node(human_node("B?", "b", name="ask_b"))
    graph.add_node(Node("busy", busy))
    graph.add_node(Node("join", join))
    for name in ("ask_a", "ask_b", "busy"):
        graph.add_edge(START, name)
        graph.add_edge(name, "join")
    runs.register(graph)
    first = asyncio.create_task(runs.start(graph, {}))
    def both_asked() -> bool:  # both questions asked; busy is still at work
        assert not first.done()
        return len(store.waits()) >= 2

    await until(both_asked, 10)
    run_id = store.waits()[0].run_id
    for answer in ("yes to A", "yes to B"):
        taken = await asyncio.wait_for(runs.resume(run_id, answer, by="owner"), timeout=10)
        assert taken.status == "running" and not taken.already_answered  # recorded, not rerun
    assert store.waits() == [] and calls == {"busy": 1}
    gate.set()
    done = await first  # it parked holding both answers, and took them up at once
    assert done.status == "completed"
    assert done["joined"] == ["yes to A", "yes to B", "done"]
    assert calls == {"busy": 1, "join": 1}
    assert await runs.expire_due() == []  # nothing left to take up


TOOL_WORKER = Path(__file__).with_name("tool_crash_worker.py")


@pytest.mark.parametrize("crash_point", ["after_tool", "in_flight"])
def test_a_tool_call_is_not_done_again_after_a_crash_inside_its_node(
        tmp_path: Path, crash_point: str) -> None:
    kill_when_ready(tmp_path, start_worker(TOOL_WORKER, tmp_path, crash_point))
    recovered = finish(start_worker(TOOL_WORKER, tmp_path, "recover"))
    assert recovered["results"] == [{"status": "completed", "reply": "Saved it."}]
    assert recovered["notes"] == ["the boiler code is 1234"]  # saved once
    # the model's first turn was replayed from its step: only the answer was asked again
    assert recovered["model_calls"] == 1
    # a recorded call is replayed; one in flight runs again under its key (its note: found)
    assert ran(tmp_path)["remember"] == (1 if crash_point == "after_tool" else 2)


def test_traces_are_kept_per_day_and_pruned_after_the_days_kept(tmp_path: Path) -> None:
    from graphs.trace import daily_path, prune

    day = 24 * 3600.0
    now = 1_800_000_000.0  # 2027-01-15 UTC
    for age in (0, 1, 30, 31, 45):
        write_jsonl([{"event": "graph_start"}], daily_path(tmp_path, f"r{age}", now - age * day))
    write_jsonl([], tmp_path / "notes.jsonl")  # not a day folder: left alone
    assert daily_path(tmp_path, "r0", now).parent.name == "2027-01-15"
    assert prune(tmp_path, 30, now) == ["2026-12-01", "2026-12-15"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "2026-12-16", "2027-01-14", "2027-01-15", "notes.jsonl"]

"""`frontdesk runs`: the list and one run's timeline, read from a real database file."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import graphs
from bot.cli import runs
from bot.config.settings import Settings
from graphs import END, START, Graph, Node, RunStore, human_node, route_on, run_graph


def test_public_names_are_the_listed_ones() -> None:
    assert sorted(graphs.__all__) == sorted(
        ["END", "START", "AgentLoop", "ChatModel", "EventKind", "Graph", "GraphBuildError",
         "GraphRunError", "GraphState", "GraphWorkflow", "JsonlTrace", "Node", "NodeFn",
         "Observer", "Registry", "RetryPolicy", "RouteFn", "RunContext", "RunInfo", "RunRecord",
         "RunResult",
         "RunStatus", "RunStore", "Runs", "Suspend", "WaitExpired", "WaitInfo", "agent_node",
         "continue_graph", "cost_totals", "human_node", "is_transient", "llm_node",
         "node_statuses", "parse_json_object", "route_on",
         "route_when", "run_graph", "to_mermaid", "tool_node"])
    assert all(hasattr(graphs, name) for name in graphs.__all__)


async def make_runs(home: Path) -> tuple[str, str]:
    store = RunStore.open(Settings(home=home).database)
    graph = Graph("greet")
    graph.add_node(Node("hello", lambda s: {"reply": "hi"}))
    graph.add_node(human_node("Send it?", "ok", ["yes", "no"], name="ask"))
    graph.add_edge(START, "hello")
    graph.add_edge("hello", "ask")
    graph.add_router("ask", route_on("ok"), {"yes": END, "no": END})
    waiting = await run_graph(graph, {"text": "hello"}, store=store, meta={"chat": "c1"})
    plain = Graph("plain")
    plain.add_node(Node("only", lambda s: {"x": 1}))
    plain.add_edge(START, "only")
    done = await run_graph(plain, {}, store=store)
    store.db.close()
    return waiting.run_id or "", done.run_id or ""


async def test_runs_lists_and_shows_a_timeline(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    waiting_id, done_id = await make_runs(tmp_path)
    settings = Settings(home=tmp_path)
    assert runs.main(argparse.Namespace(run_id=None), settings) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(done_id) and "plain" in lines[0] and "completed" in lines[0]
    assert lines[1].startswith(waiting_id) and "waiting" in lines[1]
    assert runs.main(argparse.Namespace(run_id=waiting_id), settings) == 0
    out = capsys.readouterr().out
    assert "node_end    hello" in out and "wrote reply" in out
    assert "waiting on ask:1: Send it? [yes / no]" in out
    assert 'meta: {"chat": "c1"}' in out
    assert runs.main(argparse.Namespace(run_id="nope"), settings) == 1
    assert "there is no run 'nope'" in capsys.readouterr().err


async def test_runs_command_through_the_cli(tmp_path: Path) -> None:
    _, done_id = await make_runs(tmp_path)
    env = {"FRONTDESK_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-m", "bot.cli.main", "runs", done_id], env=env,
                         capture_output=True, text=True, check=True, cwd=tmp_path,
                         ).stdout
    assert "graph_end" in out and "status=completed" in out


def test_runs_without_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert runs.main(argparse.Namespace(run_id=None), Settings(home=tmp_path / "none")) == 0
    assert "No runs yet." in capsys.readouterr().out


async def test_someone_elses_words_reach_the_terminal_without_controls(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store = RunStore.open(Settings(home=tmp_path).database)
    graph = Graph("greet")
    graph.add_node(human_node("Send \x1b[2Jit\u202e?", "ok", ["yes", "no"], name="ask"))
    graph.add_edge(START, "ask")
    graph.add_router("ask", route_on("ok"), {"yes": END, "no": END})
    meta = {"words": "hi \x1b]0;owned\x07 \u202eyou"}
    waiting = await run_graph(graph, {}, store=store, meta=meta)
    store.db.close()
    settings = Settings(home=tmp_path)
    for run_id in (None, waiting.run_id):
        assert runs.main(argparse.Namespace(run_id=run_id), settings) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "Send [2Jit?" in out  # the words themselves stay

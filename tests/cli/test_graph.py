"""`frontdesk graph NAME --mermaid` for a code workflow: drawn from its last run, or no run yet."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from bot.cli import graph as graph_command
from bot.config.settings import Settings
from graphs.codefirst import parallel, pipeline, step, workflow
from graphs.runs import Runs, RunStore


def double(n: int) -> int:
    return n * 2


async def test_a_code_workflow_is_drawn_from_its_last_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "FRONTDESK_TIMEZONE": "UTC"})
    args = argparse.Namespace(name="brief", mermaid=True)
    assert graph_command.main(args, settings) == 0
    assert capsys.readouterr().out == \
        "brief: no run yet (a code workflow is drawn from its last run)\n"

    async def upper(text: str) -> str:
        return text.upper()

    @workflow(name="brief")  # a stand-in with the name of the real one, on the same database
    async def brief(words: list[str]) -> list[str]:
        await parallel([step(double, n, key=f"double{n}") for n in range(2)], name="doubles")
        return await pipeline(words, upper, name="loud")

    done = await Runs(RunStore.open(settings.database)).start(brief, {"words": ["hi"]}, run_id="b1")
    assert done.status == "completed"
    assert graph_command.main(args, settings) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "%% brief (run b1, completed): drawn from its last run"
    assert lines[1] == "flowchart TD"
    assert '    subgraph s0_doubles["doubles"]' in lines
    assert '        s1_double0["double0"]' in lines
    assert '        s4_loud_hi_upper["hi: upper"]' in lines
    assert lines[-3:] == ["    graph_start --> s0_doubles", "    s0_doubles --> s3_loud",
                          "    s3_loud --> graph_end"]


def test_a_graph_workflow_is_drawn_as_its_graph(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "FRONTDESK_TIMEZONE": "UTC"})
    assert graph_command.main(argparse.Namespace(name="triage", mermaid=True), settings) == 0
    assert capsys.readouterr().out.startswith("flowchart TD\n")
    assert graph_command.main(argparse.Namespace(name="nope", mermaid=True), settings) == 2
    assert "brief" in capsys.readouterr().err

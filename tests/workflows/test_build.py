"""The workflows concern: each workflow built with its services and registered with the runs;
graph mode off answers every message with the plain loop, still a durable, traced run."""

from __future__ import annotations

from pathlib import Path

from bot.app import assemble
from tests.support.harness import make_settings


def test_every_workflow_is_registered_and_triage_answers_in_graph_mode(tmp_path: Path) -> None:
    app = assemble(make_settings(tmp_path / "home"))
    names = {workflow.name for workflow in app.flows.runs.registry}
    assert names == {"triage", "loop", "content", "brief", "meeting", "reminder", "guest_limit"}
    assert app.flows.chat is app.flows.triage
    assert set(app.flows.prompts) >= {"loop", "quick_reply"}


def test_graph_mode_off_answers_with_the_plain_loop(tmp_path: Path) -> None:
    app = assemble(make_settings(tmp_path / "home", FRONTDESK_GRAPH_WORKFLOWS="0"))
    assert app.flows.chat is app.flows.loop
    assert [node for node in app.flows.loop.nodes] == ["loop"]

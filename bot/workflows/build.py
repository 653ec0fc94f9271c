"""The workflows concern, built: each workflow given its services, and the runs they go in.

``build`` is what the assembler (``bot.app``) calls: the triage graph (or, with graph mode off,
the one-node plain agent loop that still leaves a durable, traced run), the content workflow
behind /draft, the morning briefing, the prompts they read, and the run store and ``Runs``
they are registered with (the meeting workflow joins them in ``bot.meetings.build``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from bot.calendar.owner import OwnerCalendar
from bot.config.prompt_files import load_prompts
from bot.config.settings import Settings
from bot.models import classify_offline
from bot.models.build import ChatModels
from bot.tools.builtin import build_fact_tools, build_writing_tools
from bot.tools.loop import run_loop
from bot.tools.registry import Caller, ToolRegistry, caller_from_sender
from graphs import END, START, Graph, Node
from graphs.agent_nodes import agent_node
from graphs.codefirst import Workflow
from graphs.runs import Runs, RunStore
from graphs.workflows import brief as brief_flow
from graphs.workflows import content, triage
from memory.notes import Memory
from sqlitedb.database import Database


@dataclass(frozen=True)
class Flows:
    """The workflows a chat can start, and the durable run layer they run in."""

    store: RunStore  # the runs, their events, steps and waits
    runs: Runs  # the durable rules over ``store`` and the registered workflows
    prompts: dict[str, str]
    triage: Graph
    loop: Graph  # graph mode off: the plain agent loop, one node
    content: Graph  # /draft
    brief: Workflow  # the morning briefing (a code workflow)
    graph_mode: bool = True  # FRONTDESK_GRAPH_WORKFLOWS

    @property
    def chat(self) -> Graph:
        """What answers a plain message: triage, or the plain loop with graph mode off."""
        return self.triage if self.graph_mode else self.loop


def build(settings: Settings, db: Database, models: ChatModels, tools: ToolRegistry,
          memory: Memory, owner: OwnerCalendar,
          notify: Callable[[Caller, str], Awaitable[str]]) -> Flows:
    """Every workflow with its services, registered with a ``Runs`` over ``db``."""
    prompts = load_prompts(settings.home / "prompts")

    async def notify_from_sender(sender: dict[str, Any], text: str) -> str:
        """triage's notify_now: the sender dict becomes a caller."""
        return await notify(caller_from_sender(sender), text)

    def note_texts(scope: str, query: str, k: int) -> list[str]:
        """Memory hits for the agent's context, in the caller's own scope."""
        return [hit.text for hit in memory.search(scope, query, k)]

    triage_graph = triage.build(triage.TriageDeps(
        small=models.small, big=models.big, loop=run_loop, tools=tools,
        make_caller=caller_from_sender, search_notes=note_texts, read_calendar=owner.context,
        notify_owner=notify_from_sender, fallback_classify=classify_offline, prompts=prompts,
        has_calendar=owner.calendar is not None))
    content_graph = content.build(content.ContentDeps(
        small=models.small, big=models.big, loop=run_loop,
        writing_tools=build_writing_tools(memory), facts_tools=build_fact_tools(memory),
        make_caller=caller_from_sender, save_note=memory.add, prompts=prompts,
        max_words=settings.draft_max_words))
    brief = brief_flow.build(brief_flow.BriefDeps(
        small=models.small, big=models.big, loop=run_loop,
        notes_tools=build_fact_tools(memory), make_caller=caller_from_sender,
        read_agenda=owner.agenda_for, save_note=memory.add, prompts=prompts))
    store = RunStore(db)
    runs = Runs(store, traces_dir=settings.traces_dir)  # each run's JSONL trace as it stops
    flows = Flows(store, runs, prompts, triage_graph,
                  build_loop_graph(models.big, tools, prompts["loop"]), content_graph, brief,
                  graph_mode=settings.graph_workflows)
    for workflow in (flows.triage, flows.loop, flows.content, flows.brief):
        flows.runs.register(workflow)
    return flows


def build_loop_graph(model: Any, tools: ToolRegistry, system: str) -> Graph:
    """Graph mode off: one node, the plain agent loop, so the run is still durable and traced."""
    loop = agent_node(run_loop, model, tools,
                      caller=lambda state: caller_from_sender(state["sender"]),
                      prompt=lambda state: [*state.get("history", []),
                                            triage.user_turn(state)],
                      output_key="reply", system=system, live=True)
    graph = Graph("loop")
    graph.add_node(Node("loop", loop))
    graph.add_edge(START, "loop")
    graph.add_edge("loop", END)
    return graph

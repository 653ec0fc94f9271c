"""`frontdesk graph NAME --mermaid`: print a workflow's shape as a Mermaid diagram.

A graph workflow has a fixed graph, drawn as it is. A code workflow has none: its shape is
drawn from its last run (the steps, fan-out groups and pipelines it recorded), or, before its
first run, one line says so.
"""

from __future__ import annotations

import argparse
import sys

from bot.app import assemble
from bot.config.settings import Settings
from graphs.codefirst import flow_mermaid
from graphs.mermaid import to_mermaid
from graphs.runs import RunStore, Workflow


def draw(workflow: Workflow, store: RunStore) -> str:
    """The workflow as Mermaid text, or one line saying it has no run to draw from yet."""
    if workflow.graph is not None:
        return to_mermaid(workflow.graph)
    last = store.last_run(workflow.name)
    if last is None:
        return f"{workflow.name}: no run yet (a code workflow is drawn from its last run)\n"
    return flow_mermaid(store.steps(last.id), f"{workflow.name} (run {last.id}, {last.status})")


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Find the named workflow (as the bot is assembled) and print it."""
    app = assemble(settings)
    workflows = {workflow.name: workflow for workflow in app.flows.runs.registry}
    found = workflows.get(args.name)
    if found is None:
        print(f"frontdesk graph: no workflow named {args.name!r}; try one of: "
              + ", ".join(sorted(workflows)), file=sys.stderr)
        return 2
    print(draw(found, app.flows.store), end="")
    return 0

"""`frontdesk graph NAME --mermaid`: print a workflow's graph as a Mermaid diagram."""

from __future__ import annotations

import argparse
import sys

from bot.services import Services
from bot.settings import Settings
from graphs.mermaid import to_mermaid


def main(args: argparse.Namespace, settings: Settings) -> int:
    """Build the named workflow (on the configured services) and print it."""
    services = Services.from_settings(settings)
    graphs = {graph.name: graph for graph in services.store.graphs.values()}
    graph = graphs.get(args.name)
    if graph is None:
        print(f"frontdesk graph: no workflow named {args.name!r}; try one of: "
              + ", ".join(sorted(graphs)), file=sys.stderr)
        return 2
    print(to_mermaid(graph))
    return 0

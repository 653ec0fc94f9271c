"""A code workflow run as the dashboard, ``frontdesk runs`` and ``frontdesk graph`` show it.

Pure functions over the run's step rows (``RunStore.steps(run_id)``): ``flow_view`` gives one
JSON shape (the steps, the pipelines as items × stages matrices, the fan-out groups with their
children's states), ``matrix_text`` a pipeline as a text table, ``flow_mermaid`` the run's
shape as a Mermaid flowchart (a code workflow has no fixed graph: it is drawn from a run).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from graphs.runs.records import StepRow

_SHAPES = ("pipeline", "parallel")
_PENDING = {"status": "pending", "duration_s": None}


def _took(row: StepRow) -> float | None:
    return None if row.ended_at is None else round(row.ended_at - row.started_at, 6)


def _status(key: str, by_key: dict[str, StepRow]) -> str:
    """A child's state: its step's, an ask's latest round's, else pending."""
    if key in by_key:
        return by_key[key].status
    rounds = [k for k in by_key if k.startswith(key + "#") and "/" not in k[len(key):]]
    return by_key[max(rounds, key=lambda k: int(k.split("#")[-1]))].status if rounds \
        else "pending"


def flow_view(steps: Sequence[StepRow]) -> dict[str, Any]:
    """A code workflow run for the dashboard (empty lists for a graph run).

    ``{"steps": [{"key", "kind", "status", "started_at", "ended_at", "duration_s", "error"}],
    "pipelines": [{"name", "items": [...], "stages": [...],
    "cells": [[{"status", "duration_s"} per stage] per item]}],
    "groups": [{"name", "children": [{"key", "status"}]}]}``; a status is ``pending``,
    ``running``, ``waiting``, ``done``, ``failed`` or ``cancelled``.
    """
    rows = [row for row in steps if row.kind not in _SHAPES]
    by_key = {row.key: row for row in rows}
    cells = {(row.pipeline, row.item, row.stage): {"status": row.status, "duration_s": _took(row)}
             for row in rows if row.kind == "cell"}
    pipelines = [{"name": shape.key, "items": shape.output["items"],
                  "stages": shape.output["stages"],
                  "cells": [[cells.get((shape.key, item, stage), _PENDING)
                             for stage in shape.output["stages"]]
                            for item in shape.output["items"]]}
                 for shape in steps if shape.kind == "pipeline"]
    groups = []
    for shape in (row for row in steps if row.kind == "parallel"):
        keys = list(dict.fromkeys([*shape.output.get("children", []),
                                   *(row.key for row in rows if row.group == shape.key)]))
        groups.append({"name": shape.key,
                       "children": [{"key": key, "status": _status(key, by_key)}
                                    for key in keys]})
    return {"steps": [{"key": row.key, "kind": row.kind, "status": row.status,
                       "started_at": row.started_at, "ended_at": row.ended_at,
                       "duration_s": _took(row), "error": row.error} for row in rows],
            "pipelines": pipelines, "groups": groups}


def matrix_text(grid: dict[str, Any]) -> str:
    """A pipeline from ``flow_view`` as a plain-text items × stages table."""
    width = max([len("item"), *(len(item) for item in grid["items"])])
    sizes = [max(len(stage), 9) for stage in grid["stages"]]
    lines = [f"pipeline {grid['name']} (items × stages):",
             "  " + "  ".join(["item".ljust(width), *(s.ljust(n) for s, n in
                                                    zip(grid["stages"], sizes, strict=True))])]
    for item, row in zip(grid["items"], grid["cells"], strict=True):
        cells = [cell["status"].ljust(n) for cell, n in zip(row, sizes, strict=True)]
        lines.append("  " + "  ".join([item.ljust(width), *cells]).rstrip())
    return "\n".join(lines)


def _text(label: str) -> str:
    return '"' + label.replace('"', "#quot;") + '"'


def flow_mermaid(steps: Sequence[StepRow], title: str) -> str:
    """The run's shape as Mermaid ``flowchart TD`` text, its first line a comment saying it
    was drawn from a run (``title``): the top-level steps in the order they started, each
    fan-out group and pipeline a block (a pipeline's items as chains of its stages)."""
    ids: dict[str, str] = {}

    def node_id(key: str) -> str:
        return ids.setdefault(key, f"s{len(ids)}_" + re.sub(r"\W", "_", key)[:40])

    view = flow_view(steps)
    inside = {child["key"] for group in view["groups"] for child in group["children"]}
    first: dict[str, float] = {}  # a block's place: when its first part started
    for row in steps:
        owner = row.pipeline if row.kind == "cell" else row.group
        for name in (row.key, owner):
            if name is not None:
                first[name] = min(first.get(name, row.started_at), row.started_at)
    units: list[tuple[float, str, list[str]]] = []  # (place, id, lines)
    for row in steps:
        base = row.key.split("#", 1)[0]  # an ask's rounds are one question
        if "/" in row.key or row.kind in (*_SHAPES, "cell") or row.key in inside \
                or base in ids:
            continue
        shape = f"{{{_text(base)}}}" if row.kind == "ask" else f"[{_text(base)}]"
        units.append((first[row.key], node_id(base), [f"    {node_id(base)}{shape}"]))
    for group in view["groups"]:
        lines = [f"    subgraph {node_id(group['name'])}[{_text(group['name'])}]"]
        lines += [f"        {node_id(child['key'])}[{_text(child['key'])}]"
                  for child in group["children"]]
        units.append((first.get(group["name"], 0.0), node_id(group["name"]), [*lines, "    end"]))
    for grid in view["pipelines"]:
        lines = [f"    subgraph {node_id(grid['name'])}[{_text('pipeline ' + grid['name'])}]"]
        for item in grid["items"]:
            chain = [node_id(f"{grid['name']}/{item}/{stage}") for stage in grid["stages"]]
            lines += [f"        {cell}[{_text(f'{item}: {stage}')}]"
                      for cell, stage in zip(chain, grid["stages"], strict=True)]
            lines += [f"        {a} --> {b}" for a, b in itertools.pairwise(chain)]
        units.append((first.get(grid["name"], 0.0), node_id(grid["name"]), [*lines, "    end"]))
    units.sort(key=lambda unit: unit[0])
    order = ["graph_start", *(unit[1] for unit in units), "graph_end"]
    lines = [f"%% {title}: drawn from its last run", "flowchart TD",
             "    graph_start([START])", "    graph_end([END])"]
    lines += [line for unit in units for line in unit[2]]
    lines += [f"    {a} --> {b}" for a, b in itertools.pairwise(order)]
    return "\n".join(lines) + "\n"

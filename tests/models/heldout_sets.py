"""What the held-out sets' tests share: reading a set, the router's route accuracy on it (alone,
and as the bot routes, sender included), and how many of its lines the training set holds."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from bot.models import classify_offline
from graphs.workflows.triage import choose_route

DATA = Path(__file__).resolve().parent.parent / "data"
TRAINING = DATA / "triage_set.jsonl"
ROUTE_OF = {"social": "quick_reply", "question": "full_agent", "task": "full_agent",
            "urgent": "notify_now"}


def rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def accuracy(path: Path) -> float:
    """The shipped router's route accuracy on a set (sender ignored: the router alone)."""
    held = rows(path)
    right = sum(ROUTE_OF[classify_offline(row["text"])[0]] == row["route"] for row in held)
    return right / len(held)


def accuracy_as_routed(path: Path) -> float:
    """The share routed right as ``frontdesk eval --offline`` routes: the owner's urgent
    message goes to the agent (``choose_route``)."""
    held = rows(path)
    right = sum(choose_route(*classify_offline(row["text"]), row.get("sender") == "owner")
                == row["route"] for row in held)
    return right / len(held)


@cache
def trained_texts() -> frozenset[str]:
    """The training set's texts, case and edges aside (read once: 19,360 rows)."""
    return frozenset(row["text"].strip().lower() for row in rows(TRAINING))


def trained_lines(path: Path) -> list[str]:
    """The set's lines the training set holds too (case and edges aside)."""
    return [row["text"] for row in rows(path) if row["text"].strip().lower() in trained_texts()]


def assert_eval_format(path: Path, lines: int) -> None:
    """The set has ``lines`` messages in ``frontdesk eval``'s format, every route among them."""
    held = rows(path)
    assert len(held) == lines
    assert {row["route"] for row in held} == set(ROUTE_OF.values())
    assert all(row["sender"] in {"guest", "owner"} for row in held)

"""The offline router on the third held-out set (tests/data/router_heldout_3.jsonl): 400
messages in twenty languages, written by someone who never opened the repository nor saw the
other sets, while issue 39's third round was tuned without it, then read once at the end
(docs/router.md). The figure read then is a floor; 95 %, which the issue asks for, is an
expected failure that turns red once it is reached (on a fourth set: this one is spent now)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bot.models import classify_offline

DATA = Path(__file__).resolve().parent.parent / "data"
HELDOUT = DATA / "router_heldout_3.jsonl"
TRAINING = DATA / "triage_set.jsonl"
ROUTE_OF = {"social": "quick_reply", "question": "full_agent", "task": "full_agent",
            "urgent": "notify_now"}
READ_ONCE = 359 / 400  # 89.75 % when the set was read, the one time it was held out
# Lines both writers wrote apart ("😂😂😂", "What time do you open on Saturdays?"): 4 when read.
SHARED_WHEN_READ = 4


def rows(path: Path) -> list[dict[str, str]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def accuracy() -> float:
    held = rows(HELDOUT)
    right = sum(ROUTE_OF[classify_offline(row["text"])[0]] == row["route"] for row in held)
    return right / len(held)


def test_the_set_is_in_the_eval_format_with_every_route() -> None:
    held = rows(HELDOUT)
    assert len(held) == 400
    assert {row["route"] for row in held} == set(ROUTE_OF.values())
    assert all(row["sender"] in {"guest", "owner"} for row in held)


def test_training_takes_in_none_of_its_lines() -> None:
    trained = {row["text"].strip().lower() for row in rows(TRAINING)}
    shared = [row for row in rows(HELDOUT) if row["text"].strip().lower() in trained]
    assert len(shared) <= SHARED_WHEN_READ


def test_the_router_keeps_the_figure_read_once() -> None:
    assert accuracy() >= READ_ONCE


@pytest.mark.xfail(strict=True, reason="issue 39 asks 95 % on words never seen: 89.75 % read")
def test_the_router_reaches_95_percent() -> None:
    assert accuracy() >= 0.95

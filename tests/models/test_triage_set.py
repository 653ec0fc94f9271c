"""The labelled triage set loads and the offline rules run on every row (accuracy: the bench)."""

from __future__ import annotations

import json
from pathlib import Path

from bot.models import classify_offline

SET = Path(__file__).resolve().parent.parent / "data" / "triage_set.jsonl"
INTENTS = {"social", "question", "task", "urgent"}


def load_rows() -> list[dict[str, str]]:
    return [json.loads(line) for line in SET.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def test_the_set_is_large_multilingual_and_covers_every_intent() -> None:
    rows = load_rows()
    assert len(rows) >= 300
    assert all(set(row) <= {"text", "intent", "language", "note"} for row in rows)
    assert all(row["text"].strip() and row["intent"] in INTENTS for row in rows)
    assert {row["intent"] for row in rows} == INTENTS
    assert len({row["language"] for row in rows}) >= 6
    assert len({row["text"] for row in rows}) == len(rows)  # no duplicates


def test_the_set_holds_the_hard_cases() -> None:
    notes = [row.get("note", "") for row in load_rows()]
    for hard_case in ("thanks with a request in it", "sounds urgent, is not",
                      "emergency without the keyword", "plain phrasing"):
        assert sum(hard_case in note for note in notes) >= 5, hard_case


def test_the_rules_run_on_every_row_and_answer_a_known_intent() -> None:
    for row in load_rows():
        intent, urgency = classify_offline(row["text"])
        assert intent in INTENTS and 0.0 <= urgency <= 1.0, row["text"]

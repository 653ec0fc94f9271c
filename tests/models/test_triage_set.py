"""The labelled triage set: its shape, its fixed splits, and the router runs on every row
(accuracy on the test split: tests/models/test_router.py; every figure: the bench)."""

from __future__ import annotations

import json
import zlib
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
    assert len(rows) >= 1500
    assert all(set(row) <= {"text", "intent", "language", "note", "split"} for row in rows)
    assert all(row["text"].strip() and row["intent"] in INTENTS for row in rows)
    assert {row["intent"] for row in rows} == INTENTS
    assert len({row["language"] for row in rows}) >= 6
    assert len({row["text"] for row in rows}) == len(rows)  # no duplicates


def test_the_splits_are_fixed_and_disjoint() -> None:
    """Test is the batch written apart first; train and tune are split by a hash of the text,
    so adding rows never moves an old one; no text is in two splits."""
    rows = load_rows()
    assert {row["split"] for row in rows} == {"train", "tune", "test"}
    for row in rows:
        if row["split"] != "test":
            hashed = "tune" if zlib.crc32(row["text"].encode("utf-8")) % 5 == 0 else "train"
            assert row["split"] == hashed, row["text"]
    folded = [row["text"].strip().lower() for row in rows]
    assert len(set(folded)) == len(folded)
    test = [row for row in rows if row["split"] == "test"]
    assert len(test) >= 350 and {row["intent"] for row in test} == INTENTS


def test_the_set_holds_the_hard_cases() -> None:
    notes = [row.get("note", "") for row in load_rows()]
    for hard_case in ("thanks with a request in it", "sounds urgent, is not",
                      "emergency without the keyword", "plain phrasing"):
        assert sum(hard_case in note for note in notes) >= 5, hard_case


def test_the_rules_run_on_every_row_and_answer_a_known_intent() -> None:
    for row in load_rows():
        intent, urgency = classify_offline(row["text"])
        assert intent in INTENTS and 0.0 <= urgency <= 1.0, row["text"]

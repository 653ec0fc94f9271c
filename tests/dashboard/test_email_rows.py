"""The dashboard's run rows name an email correspondent by name and address."""

from __future__ import annotations

from typing import Any

from bot.dashboard.data import run_row
from graphs.runs import RunInfo

COSTS = {"calls": {}, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}


def row(meta: dict[str, Any]) -> dict[str, Any]:
    run = RunInfo(id="m-1", workflow="triage", status="completed", route="reply", error=None,
                  meta=meta, started_at=1.0, ended_at=2.0)
    return run_row(run, COSTS, None, 3.0)


def test_an_email_run_shows_the_name_and_the_address() -> None:
    found = row({"platform": "email", "chat_id": "ana@example.com", "name": "Ana Lima",
                 "user": "email:ana@example.com", "words": "Subject: Lunch"})
    assert found["who"] == "Ana Lima <ana@example.com>" and found["words"] == "Subject: Lunch"
    assert row({"platform": "email", "chat_id": "bo@example.com"})["who"] == "bo@example.com"


def test_a_chat_run_shows_the_name_alone() -> None:
    assert row({"platform": "telegram", "chat_id": "42", "name": "Ana"})["who"] == "Ana"

"""`frontdesk chat` and `frontdesk graph` end to end: real subprocesses, the offline provider."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.child_process import clean_env
from tests.support.harness import event_around_now


def frontdesk(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a clean environment (offline, no tokens) on ``home``."""
    clean = clean_env("TZ", FRONTDESK_HOME=str(home), FRONTDESK_TIMEZONE="UTC", **env)
    home.mkdir(parents=True, exist_ok=True)
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args], cwd=home, env=clean,
                          capture_output=True, text=True, timeout=60, check=False)


def chat_json(home: Path, text: str, *args: str, **env: str) -> dict[str, Any]:
    """``frontdesk chat TEXT --json``: exit 0 and exactly one JSON object on stdout."""
    done = frontdesk(home, "chat", text, *args, "--json", **env)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout
    result: dict[str, Any] = json.loads(lines[0])
    assert list(result) == ["reply", "route", "run_id", "model_calls", "buttons"]
    assert set(result["model_calls"]) == {"small", "big"}
    assert all(type(n) is int for n in result["model_calls"].values())
    assert isinstance(result["reply"], str) and result["reply"]
    return result


def test_remember_then_recall(tmp_path: Path) -> None:
    saved = chat_json(tmp_path, "remember that the dentist is Friday 3pm")
    assert saved["route"] == "full_agent" and "the dentist is Friday 3pm" in saved["reply"]
    assert isinstance(saved["run_id"], str)
    recalled = chat_json(tmp_path, "when is the dentist?")
    assert recalled["route"] == "full_agent" and "Friday 3pm" in recalled["reply"]
    assert recalled["run_id"] != saved["run_id"]


def test_social_message_is_a_quick_reply_with_no_big_model_call(tmp_path: Path) -> None:
    result = chat_json(tmp_path, "hi there!")
    assert result["route"] == "quick_reply"
    assert result["model_calls"] == {"small": 1, "big": 0}  # the classify call answered it
    assert result["reply"].startswith("Hello! I'm in offline mode")


def test_a_newcomers_first_question_about_the_assistant_says_what_it_can_do(
        tmp_path: Path) -> None:
    first = chat_json(tmp_path, "what can you do?", "--user", "newcomer")
    assert first["route"] == "full_agent" and "No matching notes" not in first["reply"]
    assert "remind me" in first["reply"] and "/help" in first["reply"]
    unanswered = chat_json(tmp_path, "when does the bakery open?", "--user", "newcomer")
    # a newcomer has no notes yet: no search can answer
    assert unanswered["reply"].startswith("I have no note that answers that.")


def test_todays_agenda_from_the_calendar_file(tmp_path: Path) -> None:
    ics = event_around_now(tmp_path / "cal.ics", "Budget review with Ann")
    owner = chat_json(tmp_path / "home", "what's on my agenda today?",
                      FRONTDESK_CALENDAR=str(ics))
    assert owner["route"] == "full_agent" and "Budget review with Ann" in owner["reply"]
    guest = chat_json(tmp_path / "home", "what's on the agenda today?", "--user", "bob",
                      FRONTDESK_CALENDAR=str(ics))
    assert "busy" in guest["reply"] and "Budget review" not in guest["reply"]


def test_urgent_message_from_another_user_reaches_the_owner(tmp_path: Path) -> None:
    done = frontdesk(tmp_path, "chat", "urgent: the basement is flooding", "--user", "bob")
    assert done.returncode == 0, done.stderr
    reply, *notices = done.stdout.strip().split("\n[to the owner] ")
    assert "passed your message on to the owner" in reply
    assert notices == ["Urgent message from bob (console:bob) on console:\n"
                       "urgent: the basement is flooding"]
    with sqlite3.connect(tmp_path / "frontdesk.db") as db:
        sent = db.execute("SELECT chat_id FROM outbox WHERE text LIKE '%basement%'"
                          " AND sent_at IS NOT NULL").fetchall()
    assert sent == [("console",)]  # the owner's console chat, and marked sent
    again = chat_json(tmp_path, "urgent: the basement is flooding", "--user", "bob")
    assert again["route"] == "notify_now" and again["model_calls"] == {"small": 1, "big": 0}


def test_command_has_no_run_and_graph_mode_off_uses_the_loop(tmp_path: Path) -> None:
    command = chat_json(tmp_path, "/help")
    assert command["route"] == "command" and command["run_id"] is None
    assert command["model_calls"] == {"small": 0, "big": 0}
    loop = chat_json(tmp_path, "urgent: water leak", "--user", "bob",
                     FRONTDESK_GRAPH_WORKFLOWS="0")
    assert loop["route"] == "loop" and "passed your message on" in loop["reply"]
    assert loop["model_calls"]["small"] == 0


def test_graph_triage_mermaid(tmp_path: Path) -> None:
    done = frontdesk(tmp_path, "graph", "triage", "--mermaid")
    assert done.returncode == 0, done.stderr
    lines = [line.strip() for line in done.stdout.splitlines()]
    assert lines[0] == "flowchart TD"
    for edge in ("graph_start --> n_classify_intent", "graph_start --> n_check_calendar",
                 "n_classify_intent --> n_gather", "n_check_calendar --> n_gather",
                 'n_gather -.->|"quick_reply"| n_quick_reply',
                 'n_gather -.->|"full_agent"| n_full_agent',
                 'n_gather -.->|"notify_now"| n_notify_now'):
        assert edge in lines
    unknown = frontdesk(tmp_path, "graph", "nope", "--mermaid")
    assert unknown.returncode == 2 and "triage" in unknown.stderr


def test_a_reply_with_buttons_lists_them(tmp_path: Path) -> None:
    offer = chat_json(tmp_path, "/meet budget", FRONTDESK_MEETING_HOURS="Mon-Sun 08:00-20:00",
                      FRONTDESK_MEETING_NOTICE="1")
    labels = [button["label"] for button in offer["buttons"]]
    assert len(labels) == 4 and labels[-1] == "None of these", offer
    assert all(button["data"] and set(button) == {"label", "data"}
               for button in offer["buttons"])
    assert chat_json(tmp_path, "hi there!")["buttons"] == []

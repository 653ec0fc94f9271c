"""/brief end to end: the gateway, the console adapter, a real .ics file, fake models."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from bot.adapters.console import ConsoleAdapter, console_message
from bot.app import App, assemble
from bot.chat.gateway import Gateway
from bot.cli import runs as runs_command
from bot.config.settings import Settings
from bot.messages import Reply
from bot.models import Models
from bot.models.base import Message, ToolSpec, as_messages
from bot.models.base import Reply as ModelReply
from graphs.codefirst import flow_view
from tests.fakes.model import FakeModel

Answer = Callable[[list[Message]], "str | list[tuple[str, dict[str, Any]]]"]


class ByPurpose(FakeModel):
    """A FakeModel whose reply depends on the call's purpose, so parallel calls can't mix."""

    def __init__(self, role: str, answers: dict[str, Answer]) -> None:
        super().__init__(role=role)
        self.answers = answers
        self.refusing: str | None = None  # set: every reply is refused, as past the budget

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None, observer: Any = None) -> ModelReply:
        answer = self.answers[purpose or ""](as_messages(messages))
        if isinstance(answer, str):
            self.enqueue(text=answer)
        else:
            self.enqueue(tool_calls=answer)
        reply = await super().complete(messages, tools=tools, max_tokens=max_tokens,
                                       purpose=purpose, observer=observer)
        if self.refusing:
            reply.refused, reply.provider = self.refusing, "offline"
        return reply


def related(messages: list[Message]) -> str | list[tuple[str, dict[str, Any]]]:
    """First search the notes for the event, then report what was found."""
    if messages[-1].role != "tool":
        return [("search_notes", {"query": json.loads(messages[1].content)["summary"]})]
    found = [line.split(": ", 1)[1] for line in messages[-1].content.splitlines() if ": " in line]
    return json.dumps({"notes": found})


def draft(messages: list[Message]) -> str:
    section = json.loads(messages[1].content)
    return f"{section['event']['summary']}: {'; '.join(section['notes']) or 'no notes'}."


def check(messages: list[Message]) -> str:
    if "Dentist" in messages[1].content:
        return '{"ok": false, "problem": "say to bring the insurance card"}'
    return '{"ok": true, "problem": ""}'


BIG: dict[str, Answer] = {
    "related_notes": related, "draft": draft,
    "fix": lambda m: "Dentist at 14:00: bring the insurance card.",
    "revise": lambda m: "Short: coffee with Ann, then the dentist.",
}


@dataclass
class Desk:
    gateway: Gateway
    console: ConsoleAdapter
    big: ByPurpose
    small: ByPurpose
    settings: Settings
    app: App  # what assemble built: memory, store...

    async def say(self, text: str) -> Reply:
        reply = await self.gateway.handle(console_message(text))
        assert reply is not None
        return reply


def write_calendar(path: Path) -> None:
    day = datetime.now(UTC).strftime("%Y%m%d")
    events = [("coffee", "Coffee with Ann", "090000", "093000"),
              ("dentist", "Dentist", "140000", "143000")]
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"]
    for uid, summary, start, end in events:
        lines += ["BEGIN:VEVENT", f"UID:{uid}", f"DTSTAMP:{day}T000000Z", f"SUMMARY:{summary}",
                  f"DTSTART:{day}T{start}Z", f"DTEND:{day}T{end}Z", "END:VEVENT"]
    path.write_text("\r\n".join([*lines, "END:VCALENDAR"]) + "\r\n")


async def open_desk(home: Path, env: dict[str, str] | None = None) -> Desk:
    if not (home / "cal.ics").exists():
        home.mkdir(parents=True, exist_ok=True)
        write_calendar(home / "cal.ics")
    settings = Settings.from_env({"FRONTDESK_HOME": str(home), "FRONTDESK_TIMEZONE": "UTC",
                                  "FRONTDESK_CALENDAR": str(home / "cal.ics"), **(env or {})})
    big, small = ByPurpose("big", BIG), ByPurpose("small", {"check": check})
    app = assemble(settings, models=Models(small=small, big=big))
    gateway = app.chat.gateway
    await gateway.start()
    console = ConsoleAdapter(echo=False)
    await gateway.attach(console)
    return Desk(gateway, console, big, small, settings, app)


@pytest.fixture
async def desk(tmp_path: Path) -> Desk:
    desk = await open_desk(tmp_path)
    desk.app.memory.add("owner", "Ann prefers green tea")
    return desk


async def test_brief_gathers_drafts_checks_asks_revises_and_saves(desk: Desk, capsys:
                                                                  pytest.CaptureFixture[str]
                                                                  ) -> None:
    asked = await desk.say("/brief")
    assert asked.route == "command" and asked.run_id is not None
    assert [b.label for b in asked.buttons] == ["Approve", "Revise", "Discard"]
    assert "Coffee with Ann: Ann prefers green tea." in asked.text  # notes found in parallel
    assert "Dentist at 14:00: bring the insurance card." in asked.text  # checked, then fixed
    assert asked.text.index("09:00–09:30 Coffee") < asked.text.index("14:00–14:30 Dentist")
    assert asked.text.endswith("Send this briefing?")
    purposes = [c.purpose for c in desk.big.history]
    assert purposes.count("related_notes") == 4 and purposes.count("draft") == 2
    assert purposes.count("fix") == 1 and [c.purpose for c in desk.small.history] == ["check"] * 2

    assert (await desk.say("Revise")).text == "What should change?"
    again = await desk.say("shorter")
    assert again.text.startswith("Short: coffee with Ann, then the dentist.")
    assert "shorter" in next(c for c in desk.big.history
                             if c.purpose == "revise").messages[1].content
    done = await desk.say("approve")
    assert done.text.startswith("Short: coffee with Ann, then the dentist.")
    notes = [n.text for n in desk.app.memory.recent("owner", 5)]
    assert notes[0] == "Short: coffee with Ann, then the dentist."

    store = desk.app.flows.store
    run = store.run(asked.run_id)
    assert run is not None and run.workflow == "brief" and run.status == "completed"
    [grid] = flow_view(store.steps(asked.run_id))["pipelines"]
    assert grid["name"] == "sections" and grid["stages"] == ["draft_section", "check_section"]
    assert grid["items"] == ["09:00–09:30 Coffee with Ann", "14:00–14:30 Dentist"]
    assert all(cell["status"] == "done" for row in grid["cells"] for cell in row)
    assert store.costs(asked.run_id)["calls"] == {"big": 8, "small": 2}
    assert runs_command.main(argparse.Namespace(run_id=None), desk.settings) == 0
    assert f"{asked.run_id}  brief" in capsys.readouterr().out
    assert runs_command.main(argparse.Namespace(run_id=asked.run_id), desk.settings) == 0
    shown = capsys.readouterr().out
    assert "node_end    sections/09:00–09:30 Coffee with Ann/draft_section" in shown
    assert "pipeline sections (items × stages):" in shown
    assert "  14:00–14:30 Dentist          done           done" in shown


async def test_a_restart_while_the_briefing_waits_loses_nothing(tmp_path: Path) -> None:
    first = await open_desk(tmp_path)
    asked = await first.say("/brief")
    second = await open_desk(tmp_path)
    done = await second.say("Approve")
    assert done.text.startswith("Briefing for ") and "Saved as note #" in done.text
    assert second.big.history == [] and second.small.history == []  # nothing ran again
    assert second.app.flows.store.run(asked.run_id or "") is not None


async def test_only_the_owner_gets_a_briefing(desk: Desk) -> None:
    reply = await desk.gateway.handle(console_message("/brief", "bob"))
    assert reply is not None and "Only the owner" in reply.text
    assert desk.app.flows.store.runs() == []


async def test_the_scheduled_briefing_reaches_the_owner_once_per_day(desk: Desk) -> None:
    await desk.app.chat.briefing.scheduled("2030-01-02")
    await desk.app.chat.briefing.scheduled("2030-01-02")  # e.g. a crash before the day was marked
    asked = [text for chat, text in desk.console.sent if "Send this briefing?" in text]
    assert len(asked) == 1 and [r.id for r in desk.app.flows.store.runs()] == ["brief-2030-01-02"]
    done = await desk.say("1")
    assert "Saved as note #" in done.text

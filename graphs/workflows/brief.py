"""Brief: the owner's morning briefing, written as a code workflow (``graphs.codefirst``).

Today's agenda from the calendar (a memoised ``step``); for each event, in ``parallel``, an
agent with the memory search tool pulls related notes; a ``pipeline`` drafts then checks each
section (a failed check is fixed once; a check that gave no verdict — none in the reply,
offline, failed — is *not checked*, and the card says so); the assembled briefing goes to the
owner (``ask``:
Approve / Revise / Discard — Revise asks what should change, rewrites, and asks again); on
approval it is sent and saved as a note. A refused model call (the daily budget) stops the
run with a sentence saying so: no briefing is made of it. The schedule (every day at
``FRONTDESK_BRIEF_AT``) is a recurring task of the reminder timer (``bot.reminders.timer``).

Usage::

    brief = runs.register(build(BriefDeps(small=..., big=..., loop=run_loop, ...)))
    result = await runs.start(brief, {"day": "2025-03-14", "sender": owner}, run_id=run_id)
    # result.status == "waiting": show result.waits[0]["question"] with its options, then
    result = await runs.resume(run_id, "Approve", by="owner")        # graphs.runs.Runs
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from graphs.codefirst import AgentKit, Workflow, agent, ask, parallel, pipeline, step, workflow
from graphs.protocols import AgentLoop, ChatModel, parse_json_object
from graphs.workflows.verdicts import NeedsVerdict, NoVerdict, Refused, StopOnRefusal

log = logging.getLogger(__name__)
PROMPTS = {
    "brief_related": "You prepare the owner's day. Search the owner's notes for anything "
                     "related to this calendar event (people, places, topics) and list the "
                     "useful facts.",
    "brief_draft": "Write one short section of the owner's morning briefing about this event: "
                   "when, what, and what the related notes say that matters. Two to four "
                   "sentences, plain text.",
    "brief_check": "Check this briefing section against its event and notes: is every time, "
                   "name and fact right, and is it short? ok=false with the problem if not.",
    "brief_fix": "Rewrite this briefing section so the problem is gone. Plain text only.",
    "brief_revise": "Rewrite the owner's morning briefing following their feedback. Keep the "
                    "facts; plain text only.",
}


@dataclass
class AgendaItem:
    """One event of the day, as the briefing sees it."""

    summary: str
    start: str
    end: str
    all_day: bool = False


@dataclass
class Related:
    """What the notes say about one event."""

    notes: list[str]


@dataclass
class SectionInput:
    """What a section is written from: the event and its related notes."""

    event: AgendaItem
    notes: list[str]


@dataclass
class Section:
    """One section of the briefing, after drafting (and checking)."""

    event: AgendaItem
    notes: list[str]
    text: str
    checked: bool = False
    problem: str = ""
    unchecked: str = ""  # why the check gave no verdict, when it did not


@dataclass
class Review:
    """The small model's verdict on a section."""

    ok: bool
    problem: str = ""


@dataclass
class Briefing:
    """The assembled briefing the owner approves."""

    day: str
    text: str
    unchecked: list[str] = field(default_factory=list)  # "Facts: not checked — why (event)"


@dataclass(frozen=True)
class BriefDeps:
    """Services the briefing uses, passed in by the gateway's wiring."""

    small: ChatModel
    big: ChatModel
    loop: AgentLoop
    notes_tools: Any  # the related-notes agent's tools: memory search only
    make_caller: Callable[[dict[str, Any]], Any]
    read_agenda: Callable[[str], list[dict[str, Any]]]  # ISO day -> events (summary, start...)
    save_note: Callable[[str, str], int]  # (scope, text) -> note id
    prompts: Mapping[str, str] = field(default_factory=dict)
    parallel_limit: int = 4
    expires_after: float = 24 * 3600.0


def when(event: AgendaItem) -> str:
    """'09:30–10:00' (or 'all day') from the ISO times."""
    if event.all_day:
        return "all day"
    return f"{event.start[11:16]}–{event.end[11:16]}"


def has_verdict(text: str) -> bool:
    """A check's reply holds ``{"ok": true|false, ...}``."""
    return isinstance((parse_json_object(text) or {}).get("ok"), bool)


def assemble(day: str, sections: list[Section]) -> Briefing:
    """The sections in agenda order, under one heading; the unchecked ones listed apart."""
    if not sections:
        return Briefing(day, f"Briefing for {day}: nothing on your calendar today.")
    parts = [f"Briefing for {day}:"]
    parts += [f"• {when(s.event)} {s.event.summary}\n{s.text}" for s in sections]
    unchecked = [f"Facts: not checked — {s.unchecked} ({when(s.event)} {s.event.summary})"
                 for s in sections if not s.checked]
    return Briefing(day, "\n\n".join(parts), unchecked)


def approval_question(briefing: Briefing) -> str:
    """The briefing as the owner sees it, with what went unchecked."""
    parts = [briefing.text, "\n".join(briefing.unchecked), "Send this briefing?"]
    return "\n\n".join(part for part in parts if part)


def build(deps: BriefDeps) -> Workflow:
    """The briefing workflow, wired to its services."""
    prompts = {**PROMPTS, **{k: v for k, v in deps.prompts.items() if k in PROMPTS}}
    big, small = StopOnRefusal(deps.big), StopOnRefusal(deps.small)  # refused: Refused raised
    checker = NeedsVerdict(deps.small, has_verdict)  # no verdict: NoVerdict raised

    def read_agenda(day: str) -> list[AgendaItem]:
        """Today's events (read once per run; a replay sees the same agenda)."""
        items = [AgendaItem(str(e["summary"]), str(e["start"]), str(e["end"]),
                            bool(e.get("all_day"))) for e in deps.read_agenda(day)]
        return list({(i.summary, i.start, i.end): i for i in items}.values())  # no duplicates

    async def draft_section(section: SectionInput) -> Section:
        """The big model writes the section from the event and its notes."""
        text = await agent("draft", prompt=prompts["brief_draft"], input=section, model="big")
        return Section(section.event, section.notes, text)

    async def check_section(section: Section) -> Section:
        """The small model checks it; a problem gets one fix by the big model."""
        try:
            review = await agent("check", prompt=prompts["brief_check"], returns=Review,
                                 input={"event": section.event, "notes": section.notes,
                                        "section": section.text}, model=checker)
        except NoVerdict as missing:
            return Section(section.event, section.notes, section.text, unchecked=missing.why)
        if review.ok:
            return Section(section.event, section.notes, section.text, True)
        fixed = await agent("fix", prompt=prompts["brief_fix"], model="big",
                            input={"section": section.text, "problem": review.problem})
        return Section(section.event, section.notes, fixed, True, review.problem)

    async def revise(briefing: Briefing, feedback: str) -> Briefing:
        """The owner asked for changes: rewrite with their feedback."""
        text = await agent("revise", prompt=prompts["brief_revise"], model="big",
                           input={"briefing": briefing.text, "feedback": feedback})
        return Briefing(briefing.day, text, briefing.unchecked)

    @workflow(name="brief", agents=AgentKit(models={"big": big, "small": small},
                                            loop=deps.loop))
    async def brief(day: str, sender: dict[str, Any]) -> dict[str, Any]:
        """The briefing, or the sentence saying a model call was refused and nothing made."""
        try:
            return await briefing_run(day, sender)
        except Refused as refused:
            return {"reply": f"{refused.reason} I stopped: no briefing was made."}

    async def briefing_run(day: str, sender: dict[str, Any]) -> dict[str, Any]:
        """Agenda → related notes (parallel) → sections (pipeline) → the owner's approval."""
        events = await step(read_agenda, day, key="agenda")
        related = await parallel(
            [agent("related_notes", prompt=prompts["brief_related"], input=event,
                   returns=Related, key_by=f"{when(event)} {event.summary}", model="big",
                   tools=deps.notes_tools, caller=deps.make_caller(sender))
             for event in events], limit=deps.parallel_limit)
        sections = await pipeline(
            [SectionInput(event, found.notes) for event, found in zip(events, related,
                                                                       strict=True)],
            draft_section, check_section, name="sections", limit=deps.parallel_limit,
            key_by=lambda s: f"{when(s.event)} {s.event.summary}")
        briefing = await step(assemble, day, sections, key="assemble")
        decision = await ask(approval_question, key="approve",
                             input=briefing, returns=Briefing, revise=revise,
                             expires_after=deps.expires_after)
        if decision.expired:
            return {"reply": "The briefing expired without a decision; nothing was saved."}
        if not decision.approved:
            return {"reply": "Discarded the briefing; nothing was saved."}
        note_id = await step(deps.save_note, sender["scope"], decision.value.text,
                             key="save_note", returns=int)
        return {"reply": f"{decision.value.text}\n\n(Saved as note #{note_id}.)",
                "note_id": note_id}

    return brief

"""The chaos bench's findings: what a run observed, each message's answers, the report.

``bench/chaos.py`` runs the experiment (it sends, kills and restarts); this module holds what
it observed (``ChaosResult``), matches each chat's replies to its messages (``match_replies``:
a "Saved to your notes: locker <tag>" names its message; any other reply answers the first
unanswered question since the last note reply, else an earlier unanswered one (late), else
repeats the latest) and writes the printed report.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from bench.chaos_fakes import Chat

GREETING = "Hello! I'm in offline mode"  # the offline answer to the warm-up "hello"
SAVED = re.compile(r"Saved to your notes: locker (\w+) ")
OUTCOMES = ("never", "once", "twice", "3+")  # by number of answers


@dataclass(frozen=True)
class ChaosConfig:
    """What one chaos run does; ``kills`` None means seeded 8–15."""

    chats: int = 40
    messages_per_chat: int = 4
    kills: int | None = None
    seed: int = 1
    window: float = 45.0  # seconds over which messages are sent and kills happen
    catch_up: float = 60.0  # seconds the bot gets after the window to answer everything
    settle: float = 1.5  # seconds without a new reply that end the catch-up


@dataclass
class Sent:
    """One message a chat sends, and (after the run) how often the bot answered it."""

    chat: Chat
    position: int  # its place in the chat, from 0
    kind: str  # "remember" or "question"
    tag: str
    text: str
    at: float  # seconds into the window
    answers: int = 0
    late: bool = False  # first answered after a later message of its chat


@dataclass
class ChaosResult:
    """Everything the run observed; ``report()`` prints it."""

    config: ChaosConfig
    messages: list[Sent]
    downtimes: list[tuple[float, float]]  # (SIGKILL, restart), seconds into the window
    starts: int
    unexpected_exits: list[int | None]
    unmatched_replies: int
    notes: Counter[str]  # note text -> rows
    caught_up_after: float | None  # seconds after the window until all were answered
    duration: float
    log_tail: str = ""
    replies: dict[str, list[str]] = field(default_factory=dict)  # chat -> the bot's replies

    def doubled_notes(self) -> dict[str, int]:
        """Note texts saved more than once, with their rows (the texts are unique)."""
        return {text: rows for text, rows in self.notes.items() if rows > 1}


def match_replies(messages: Sequence[Sent], replies: Sequence[str]) -> int:
    """Count each message's answers from its chat's replies; return the unmatched ones.

    A note reply names its message. Any other reply answers the first unanswered question
    since the last note reply, else an unanswered one before it (answered out of order),
    else it repeats the latest question answered."""
    by_tag = {m.tag: m for m in messages if m.kind == "remember"}
    questions = [m for m in messages if m.kind == "question"]
    for message in messages:
        message.answers, message.late = 0, False
    anchor, newest, unmatched = -1, -1, 0
    for reply in replies:
        if reply.startswith(GREETING):
            continue
        saved = SAVED.search(reply)
        if saved and saved.group(1) in by_tag:
            target: Sent | None = by_tag[saved.group(1)]
        else:
            after = [q for q in questions if q.position > anchor]
            unanswered = [q for q in after if not q.answers] + [
                q for q in questions if q.position < anchor and not q.answers]
            answered = [q for q in questions if q.answers]
            target = unanswered[0] if unanswered else answered[-1] if answered else None
        if target is None:
            unmatched += 1
            continue
        if not target.answers and target.position < newest:
            target.late = True  # a later message of the chat was answered first
        target.answers += 1
        newest = max(newest, target.position)
        if target.kind == "remember":
            anchor = target.position
    return unmatched


def tally(messages: Sequence[Sent], chats: Sequence[Chat]) -> int:
    """Match every chat's replies now; the number of replies that fit no message."""
    unmatched = 0
    for chat in chats:
        unmatched += match_replies([m for m in messages if m.chat is chat], chat.replies())
    return unmatched


def outcome(answers: int) -> str:
    """How often a message was answered, in words."""
    return OUTCOMES[min(answers, 3)]


def describe(message: Sent) -> str:
    """The outcome, with ", late" for a message answered after a later one of its chat."""
    return outcome(message.answers) + (", late" if message.late else "")


def per_platform(messages: Sequence[Sent]) -> dict[str, Counter[str]]:
    """platform -> outcome -> messages, with an "all" row."""
    table: dict[str, Counter[str]] = {}
    for message in messages:
        for key in (message.chat.platform, "all"):
            row = table.setdefault(key, Counter())
            row[outcome(message.answers)] += 1
            row["late"] += message.late
    return table


def report(result: ChaosResult, *, every_message: bool = True) -> str:
    """The figures, as printed."""
    c = result.config
    lines = [f"chaos: {c.chats} chats, {c.messages_per_chat} messages each, "
             f"{len(result.downtimes)} SIGKILLs, seed {c.seed}, window {c.window:.0f} s",
             "down (s, SIGKILL-restart): "
             + " ".join(f"{kill:.1f}-{restart:.1f}" for kill, restart in result.downtimes),
             f"bot starts: {result.starts}; exits not caused by the bench: "
             f"{len(result.unexpected_exits)} {result.unexpected_exits or ''}".rstrip()]
    if every_message:
        lines.append("every message (chat, #, kind, answered):")
        lines += [f"  {m.chat.name:<18} {m.position + 1} {m.kind:<8} {describe(m):<11}"
                  f" {m.text}" for m in result.messages]
    lines.append(f"{'platform':<10}{'sent':>6}{'once':>6}{'twice':>7}{'3+':>5}{'never':>7}"
                 f"{'late':>6}")
    table = per_platform(result.messages)
    for platform, counts in sorted(table.items(), key=lambda row: row[0] == "all"):
        sent = sum(counts[word] for word in OUTCOMES)
        lines.append(f"{platform:<10}{sent:>6}{counts['once']:>6}"
                     f"{counts['twice']:>7}{counts['3+']:>5}{counts['never']:>7}"
                     f"{counts['late']:>6}")
    faults = [m for m in result.messages if m.answers != 1 or m.late]
    lines += [f"  not once in order: {m.chat.name} #{m.position + 1} {describe(m)}, sent at "
              f"{m.at:.1f} s: {m.text}" for m in faults]
    for chat in sorted({m.chat.name for m in faults}):  # to tell a lost answer from a late one
        shown = [" / ".join(r.splitlines()[:2])[:60] for r in result.replies.get(chat, [])]
        lines.append(f"  replies in {chat}, in order: " + " | ".join(shown))
    remembered = {m.text.removeprefix("remember that ") for m in result.messages
                  if m.kind == "remember"}
    doubled = result.doubled_notes()
    saved = sum(1 for text in remembered if result.notes[text])
    lines.append(f"side effects: {len(remembered)} remember messages, {saved} notes saved, "
                 f"{len(doubled)} saved twice or more "
                 f"({sum(rows - 1 for rows in doubled.values())} extra rows)")
    lines += [f"  note saved {rows}x: {text}" for text, rows in sorted(doubled.items())]
    caught = (f"{result.caught_up_after:.1f} s" if result.caught_up_after is not None
              else f"never (deadline {c.catch_up:.0f} s)")
    lines.append(f"all answered {caught} after the window; replies matching no message: "
                 f"{result.unmatched_replies}; run took {result.duration:.0f} s")
    return "\n".join(lines)

"""The gateway harness: settings on a temp database, a recording adapter, fakes.

A ``Harness`` is one "process": services and a gateway on a real SQLite file in ``tmp_path``,
a ``RecordingAdapter`` attached as the Telegram platform, and two ``PurposeModel`` fakes. Two
harnesses on the same home are a process and its restart. Its fixtures (``home``,
``make_harness``, ``harness``) reach every folder through tests/conftest.py.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.app import App, assemble
from bot.calendar.ics import Calendar
from bot.chat.gateway import Gateway
from bot.config.settings import Settings
from bot.messages import Button, IncomingMessage, OutgoingFile, Reply
from bot.models import Models, classify_offline
from bot.models.base import Message, Observer, TextSink, ToolSpec, as_messages, last_user_text
from bot.models.base import Reply as ModelReply
from graphs.protocols import request_sent
from tests.fakes.model import FakeModel
from tests.support.polling import until as until  # the tests take it from here

OWNER, GUEST, STRANGER = "100", "200", "999"
OWNER_CHAT = "dm-owner"  # where the adapter reaches the owner directly
_message_ids = itertools.count(1)


class RecordingAdapter:
    """A Telegram-like adapter that keeps what it sends, in order."""

    platform = "telegram"
    caption_limit = 1024

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []
        self.files: list[tuple[str, OutgoingFile]] = []  # (chat, file), in order
        self.changed = asyncio.Event()

    def split(self, text: str) -> list[str]:
        """Telegram's limit, roughly: long replies become several parts."""
        return [text[i:i + 4000] for i in range(0, len(text), 4000)] or [""]

    async def send(self, chat_id: str, text: str, buttons: list[Button] | None = None, *,
                   key: str | None = None) -> str:
        """Record one part."""
        self.sent.append((chat_id, text))
        self.changed.set()
        return str(len(self.sent))

    async def send_file(self, chat_id: str, file: OutgoingFile, caption: str = "",
                        buttons: list[Button] | None = None, *, key: str | None = None) -> str:
        """Record one file; its caption as a part's text."""
        self.files.append((chat_id, file))
        return await self.send(chat_id, caption, buttons, key=key)

    async def owner_chat(self) -> str:
        """The owner's DM."""
        return OWNER_CHAT

    def to(self, chat_id: str) -> list[str]:
        """Texts sent to one chat, in order."""
        return [text for chat, text in self.sent if chat == chat_id]


@dataclass
class Gate:
    """Makes a model call whose user text contains ``marker`` wait until released."""

    marker: str
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)


class PurposeModel(FakeModel):
    """A FakeModel that answers by purpose when nothing is queued.

    ``classify``: the offline rules as the JSON, with ``"reply": "quick: TEXT"`` when social
    (the one-call path; ``reply_in_classify=False`` is a local model that leaves the field
    out, so the quick reply takes a second call); ``quick_reply``: ``quick: TEXT``;
    anything else: ``agent: TEXT``. Replies ``enqueue``d by a test still come first.
    """

    def __init__(self, role: str, *, delay_s: float = 0.0, gate: Gate | None = None,
                 reply_in_classify: bool = True) -> None:
        super().__init__(role=role, name=f"fake-{role}")
        self.delay_s = delay_s
        self.gate = gate
        self.reply_in_classify = reply_in_classify

    async def complete(self, messages: Sequence[Message | Mapping[str, Any]], *,
                       tools: Sequence[ToolSpec] | None = None, max_tokens: int = 1024,
                       purpose: str | None = None,
                       observer: Observer | None = None,
                       on_text: TextSink | None = None) -> ModelReply:
        text = last_user_text(as_messages(messages))
        if self.gate is not None and self.gate.marker in text:
            request_sent()  # a gated call has left: only its answer is held back
            self.gate.entered.set()
            await self.gate.release.wait()
        if not self.pending:  # enqueue and pop with no await between: safe with many chats
            self.enqueue(answer_for(purpose, text, reply_in_classify=self.reply_in_classify),
                         delay_s=self.delay_s)
        return await super().complete(messages, tools=tools, max_tokens=max_tokens,
                                      purpose=purpose, observer=observer, on_text=on_text)

    def purposes(self) -> list[str | None]:
        """The purpose of every call so far."""
        return [call.purpose for call in self.history]


def answer_for(purpose: str | None, text: str, *, reply_in_classify: bool = True) -> str:
    """What a PurposeModel says for one call."""
    if purpose == "classify":
        intent, urgency = classify_offline(text)
        answer: dict[str, Any] = {"intent": intent, "urgency": urgency}
        if reply_in_classify:
            answer["reply"] = f"quick: {text}" if intent == "social" else ""
        return json.dumps(answer)
    if purpose == "quick_reply":
        return f"quick: {text}"
    return f"agent: {text}"


def write_ics(path: Path, summary: str, start: datetime, end: datetime) -> Path:
    """A one-event calendar file (times in UTC)."""
    stamp = "%Y%m%dT%H%M%SZ"
    path.write_text("\r\n".join([
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//frontdesk tests//EN", "BEGIN:VEVENT",
        "UID:gateway-test-1@frontdesk", f"DTSTAMP:{start:{stamp}}", f"DTSTART:{start:{stamp}}",
        f"DTEND:{end:{stamp}}", f"SUMMARY:{summary}", "END:VEVENT", "END:VCALENDAR", ""]),
        encoding="utf-8")
    return path


def event_around_now(path: Path, summary: str) -> Path:
    """An event from an hour ago to two hours from now: in today's agenda and the next hours."""
    now = datetime.now(UTC).replace(microsecond=0)
    return write_ics(path, summary, now - timedelta(hours=1), now + timedelta(hours=2))


@dataclass
class Harness:
    """One process's worth of Frontdesk: services, gateway, adapter and the two fakes."""

    services: App
    gateway: Gateway
    adapter: RecordingAdapter
    small: PurposeModel
    big: PurposeModel

    def message(self, text: str, user: str = OWNER, *, chat: str | None = None,
                message_id: str | None = None, name: str = "") -> IncomingMessage:
        """A Telegram message from ``user`` in their own chat unless ``chat`` is given."""
        return IncomingMessage("telegram", chat or user, message_id or str(next(_message_ids)),
                               user, text, name or f"user{user}")

    async def send(self, text: str, user: str = OWNER, **kwargs: Any) -> Reply:
        """Send one message and return the reply (which must not be None)."""
        reply = await self.gateway.handle(self.message(text, user, **kwargs))
        assert reply is not None
        return reply

    def story(self, run_id: str | None) -> list[str]:
        """The run's events, one short word each (``node_start:gather``, ``route:quick_reply``)."""
        assert run_id is not None
        return [describe(event) for event in self.services.flows.store.events(run_id)]


def describe(event: dict[str, Any]) -> str:
    """One event as a short, comparable string."""
    kind = event["event"]
    if kind in {"node_start", "node_end"}:
        return f"{kind}:{event['node']}"
    if kind == "route":
        return f"route:{event['target']}"
    if kind == "model_call":
        early = ":speculative" if event.get("speculative") else ""
        return f"model_call:{event['role']}:{event['purpose']}{early}"
    if kind == "speculation":
        return f"speculation:{event['outcome']}"
    if kind == "tool_call":
        return f"tool_call:{event['tool']}"
    if kind == "graph_end":
        return f"graph_end:{event['status']}"
    if kind == "loop_end":
        return f"loop_end:{event['stop_reason']}"
    return str(kind)


def make_settings(home: Path, **env: str) -> Settings:
    """Settings for a Telegram owner ``100`` who allows ``200``, on a database in ``home``."""
    return Settings.from_env({"FRONTDESK_HOME": str(home), "TELEGRAM_OWNER_ID": OWNER,
                              "TELEGRAM_ALLOWED_USERS": GUEST, "FRONTDESK_TIMEZONE": "UTC",
                              "FRONTDESK_MERGE_WINDOW": "0", **env})


HarnessFactory = Callable[..., Awaitable[Harness]]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """FRONTDESK_HOME for this test."""
    return tmp_path / "home"


@pytest.fixture
def make_harness(home: Path) -> HarnessFactory:
    """Build a started, attached harness: ``await make_harness(small=..., **env)``
    (``calendar``: one to read instead of FRONTDESK_CALENDAR's)."""

    async def build(small: PurposeModel | None = None, big: PurposeModel | None = None,
                    *, attach: bool = True, calendar: Calendar | None = None,
                    clock: Callable[[], float] = time.time,
                    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                    **env: str) -> Harness:
        small = small or PurposeModel("small")
        big = big or PurposeModel("big")
        services = assemble(make_settings(home, **env), models=Models(small=small, big=big),
                            calendar=calendar, clock=clock, sleep=sleep)
        gateway = services.chat.gateway
        await gateway.start()
        adapter = RecordingAdapter()
        if attach:
            await gateway.attach(adapter)
        return Harness(services, gateway, adapter, small, big)

    return build


@pytest.fixture
async def harness(make_harness: HarnessFactory) -> Harness:
    """The default harness: graph mode on, no calendar."""
    return await make_harness()


class FakeClock:
    """Time that moves only when the test says so; ``sleep`` waits for it."""

    def __init__(self, now: float = 1_700_000_000.0) -> None:
        self.now = now
        self.moved = asyncio.Event()

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        until = self.now + seconds
        while self.now < until:
            self.moved.clear()
            await self.moved.wait()

    def advance(self, seconds: float) -> None:
        self.now += seconds
        self.moved.set()


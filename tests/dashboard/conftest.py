"""Fixtures for the dashboard tests: a Frontdesk on a temp home with fake models, a dashboard
served from it on 127.0.0.1 behind its access token (``TOKEN``: the client sends it as a
Bearer header, the browser opens the ``?token=`` link and keeps the cookie), runs made
through the real gateway, and one headless chromium per test module.

A ``Desk`` is the bot's side (services, gateway, two FakeModels); ``Site`` adds the dashboard
server reading the same database through its reader connection, as ``frontdesk run`` does.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from bot.adapters.console import console_message
from bot.app import App, assemble
from bot.chat.gateway import Gateway
from bot.config.settings import Settings
from bot.dashboard.server import DashboardData, DashboardServer, start_dashboard
from bot.messages import Reply
from bot.models import Models
from graphs import END, START, Graph, Node, RunResult
from graphs.runs import Runs
from graphs.runs.reading import RunReading
from tests.fakes.model import FakeModel

GOOD = json.dumps({"score": 0.95, "feedback": ""})
CLASSIFY_S = 0.2  # how long the classifier takes, so the parallel fetch visibly overlaps it
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
TOKEN = "dashboard-token-for-the-tests"
BEARER = {"Authorization": f"Bearer {TOKEN}"}


def with_token(url: str) -> str:
    """The address as the printed link gives it: carrying the token."""
    return f"{url}{'&' if '?' in url else '?'}token={TOKEN}"


@dataclass
class Desk:
    """One Frontdesk on a temporary home: services, gateway and the two fake models."""

    services: App
    gateway: Gateway
    small: FakeModel
    big: FakeModel

    async def say(self, text: str, user: str | None = None) -> Reply:
        reply = await self.gateway.handle(console_message(text, user))
        assert reply is not None
        return reply

    async def social(self, text: str = "hello there", answer: str = "Hi! How can I help?") -> Reply:
        """A message triage sends to quick_reply: classify (slow) then the quick answer."""
        self.small.enqueue(text=json.dumps({"intent": "social", "urgency": 0.1}),
                           delay_s=CLASSIFY_S, input_tokens=120, output_tokens=12,
                           cost_usd=0.0003)
        self.small.enqueue(text=answer, input_tokens=40, output_tokens=9, cost_usd=0.0001)
        reply = await self.say(text)
        assert reply.route == "quick_reply", reply
        return reply

    async def task(self, text: str = "remember to buy milk") -> Reply:
        """A message triage sends to full_agent, which calls the ``remember`` tool once."""
        self.small.enqueue(text=json.dumps({"intent": "task", "urgency": 0.2}),
                           delay_s=CLASSIFY_S, input_tokens=130, output_tokens=14,
                           cost_usd=0.0003)
        self.big.enqueue(tool_calls=[("remember", {"text": "buy milk"})], delay_s=0.3,
                         input_tokens=900, output_tokens=40, cost_usd=0.0033)
        self.big.enqueue(text="Noted: buy milk.", delay_s=0.2, input_tokens=960,
                         output_tokens=12, cost_usd=0.003)
        reply = await self.say(text)
        assert reply.route == "full_agent", reply
        return reply

    async def draft(self, brief: str = "a thank-you note to Ann") -> Reply:
        """A /draft that passes its checks and waits for the owner's approval."""
        self.big.enqueue(text="Dear Ann, thank you for the lovely flowers!")
        self.big.enqueue(text=GOOD)
        self.small.enqueue(text=GOOD)
        reply = await self.say(f"/draft {brief}")
        assert [b.label for b in reply.buttons] == ["Approve", "Revise", "Discard"], reply
        return reply


@dataclass
class Site:
    """The dashboard served from a Desk's database."""

    desk: Desk
    server: DashboardServer
    http: aiohttp.ClientSession

    @property
    def url(self) -> str:
        return self.server.url

    async def get_json(self, path: str, status: int = 200) -> Any:
        async with self.http.get(self.url + path.lstrip("/")) as response:
            assert response.status == status, await response.text()
            return await response.json()


@dataclass
class GatedRun:
    """A run held inside its ``slow_step`` node until ``release`` is set."""

    task: asyncio.Task[RunResult]
    entered: asyncio.Event
    release: asyncio.Event
    run_id: str


async def open_desk(home: Path) -> Desk:
    small = FakeModel(role="small", name="small-model")
    big = FakeModel(role="big", name="big-model")
    settings = Settings.from_env({"FRONTDESK_HOME": str(home)})
    services = assemble(settings, models=Models(small=small, big=big))
    gateway = services.chat.gateway
    await gateway.start()
    return Desk(services, gateway, small, big)


@pytest.fixture
async def desk(tmp_path: Path) -> AsyncIterator[Desk]:
    desk = await open_desk(tmp_path / "home")
    yield desk
    desk.services.db.close()


@pytest.fixture
async def site(desk: Desk) -> AsyncIterator[Site]:
    reader = RunReading(desk.services.db.reader)
    server = await start_dashboard(DashboardData(reader, desk.services.flows.runs.registry), port=0,
                                   token=TOKEN)
    async with aiohttp.ClientSession(headers=BEARER) as http:
        yield Site(desk, server, http)
    await server.close()


@pytest.fixture
async def open_site(desk: Desk) -> AsyncIterator[Site]:
    """A dashboard started with no token at all (only ``start_dashboard`` allows it)."""
    reader = RunReading(desk.services.db.reader)
    server = await start_dashboard(DashboardData(reader, desk.services.flows.runs.registry), port=0)
    async with aiohttp.ClientSession() as http:
        yield Site(desk, server, http)
    await server.close()


async def start_gated_run(runs: Runs, run_id: str = "gated-run") -> GatedRun:
    """Start a three-node run and return once it is inside its middle node."""
    entered, release = asyncio.Event(), asyncio.Event()

    async def slow_step(state: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        await release.wait()
        return {"slow": "done"}

    graph = Graph("gated")
    graph.add_node(Node("prepare", lambda state: {"prepared": True}))
    graph.add_node(Node("slow_step", slow_step))
    graph.add_node(Node("finish", lambda state: {"finished": True}))
    graph.add_edge(START, "prepare")
    graph.add_edge("prepare", "slow_step")
    graph.add_edge("slow_step", "finish")
    graph.add_edge("finish", END)
    task = asyncio.create_task(runs.start(graph, {"topic": "gates"}, run_id=run_id))
    await asyncio.wait_for(entered.wait(), 10)
    return GatedRun(task, entered, release, run_id)

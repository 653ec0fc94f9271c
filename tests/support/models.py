"""Fixtures for the model tests: fake provider servers, an event recorder, a ledger, helpers.

Used by tests/models, tests/tools and the workflows' tests; the fixtures reach every folder
through tests/conftest.py."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.models.anthropic import AnthropicClient
from bot.models.costs import Price, PriceTable, SpendLog
from bot.models.guarded import GuardedModel
from bot.models.openai import OpenAIClient
from bot.schema import open_database
from bot.tools.registry import Caller, ToolRegistry
from graphs import RetryPolicy
from sqlitedb.database import Database
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer

OWNER = Caller(scope="owner", is_owner=True, platform="console", chat_id="console:chat:owner")
GUEST = Caller(scope="telegram:7", is_owner=False, platform="telegram",
               chat_id="telegram:chat:7")
PRICES = PriceTable({"gpt-4.1-mini": Price(0.40, 1.60), "claude-haiku-4-5": Price(1.0, 5.0),
                     "claude-sonnet-4-6": Price(3.0, 15.0), "gpt-4.1": Price(2.0, 8.0)})
KEY = "sk-test-secret-key-0123456789"


class SleepRecorder:
    """Stands in for asyncio.sleep in the retry layer: records the delays, waits for nothing."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)


class Events(list[dict[str, Any]]):
    """An observer that keeps every event."""

    def __call__(self, event: dict[str, Any]) -> None:
        self.append(event)

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The events of one kind, in order."""
        return [e for e in self if e["event"] == kind]


@pytest.fixture
async def openai_server() -> AsyncIterator[FakeOpenAIServer]:
    async with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
async def anthropic_server() -> AsyncIterator[FakeAnthropicServer]:
    async with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def sleeps() -> SleepRecorder:
    return SleepRecorder()


@pytest.fixture
def events() -> Events:
    return Events()


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    database = open_database(tmp_path / "frontdesk.db")
    yield database
    database.close()


@pytest.fixture
def ledger(db: Database) -> SpendLog:
    return SpendLog(db)


def guarded(client: OpenAIClient | AnthropicClient, sleeps: SleepRecorder, *,
            role: str = "small", attempts: int = 3, ledger: SpendLog | None = None,
            budget: float | None = None) -> GuardedModel:
    """A provider client behind our guard, with the recorded sleep and the test prices."""
    return GuardedModel(client, role=role, prices=PRICES, spend_log=ledger, budget_usd=budget,
                        policy=RetryPolicy(max_attempts=attempts, delay=0.5, max_delay=8.0),
                        sleep=sleeps)


def openai_model(server: FakeOpenAIServer, sleeps: SleepRecorder, *,
                 name: str = "gpt-4.1-mini", timeout: float = 5.0, key: str = KEY,
                 **options: Any) -> GuardedModel:
    """The real openai SDK behind our guard, pointed at the fake server."""
    client = OpenAIClient(name=name, api_key=key, base_url=server.base_url, timeout=timeout)
    return guarded(client, sleeps, **options)


def anthropic_model(server: FakeAnthropicServer, sleeps: SleepRecorder, *,
                    name: str = "claude-haiku-4-5", timeout: float = 5.0, key: str = KEY,
                    **options: Any) -> GuardedModel:
    """The real anthropic SDK behind our guard, pointed at the fake server."""
    client = AnthropicClient(name=name, api_key=key, base_url=server.base_url, timeout=timeout)
    return guarded(client, sleeps, **options)


def contract_tools(log: list[tuple[str, dict[str, Any]]] | None = None) -> ToolRegistry:
    """The four tools of the offline contract, recording their calls."""
    calls = log if log is not None else []
    registry = ToolRegistry(secrets=[KEY])

    def remember(text: str, caller: Caller) -> str:
        """Save a note for the caller.

        Args:
            text: what to remember
        """
        calls.append(("remember", {"text": text, "scope": caller.scope}))
        return f"saved note #1: {text}"

    def agenda(hours: float = 24) -> str:
        """The caller's calendar for the next hours."""
        calls.append(("agenda", {"hours": hours}))
        return "10:00 Dentist\n14:00 Team sync"

    def search_notes(query: str, caller: Caller) -> str:
        """Search the caller's notes."""
        calls.append(("search_notes", {"query": query, "scope": caller.scope}))
        return "#4 The wifi password is on the fridge"

    def notify_owner(message: str) -> str:
        """Tell the owner something now."""
        calls.append(("notify_owner", {"message": message}))
        return "The owner was notified."

    for fn in (remember, agenda, search_notes, notify_owner):
        registry.register(fn)
    return registry

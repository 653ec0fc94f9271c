"""A provider's request says when it has left (``graphs.protocols.request_sent``): once its
bytes are written, before the answer comes, and only to whoever waits in that call's context
(triage's classify waits so for the agent's speculative first turn)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from graphs.protocols import when_sent
from tests.fakes import anthropic_server as anthropic_fake
from tests.fakes import openai_server as openai_fake
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.scripted_server import ScriptedReply
from tests.support.models import SleepRecorder, anthropic_model, openai_model

STALL_S = 0.5  # the fake provider holds its answer this long


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_request_says_it_has_left_before_its_answer_comes(
        provider: str, openai_server: FakeOpenAIServer, anthropic_server: FakeAnthropicServer,
        sleeps: SleepRecorder) -> None:
    if provider == "openai":
        model, server = openai_model(openai_server, sleeps), openai_server
        body = openai_fake.text_reply("Hello.").body
    else:
        model, server = anthropic_model(anthropic_server, sleeps), anthropic_server
        body = anthropic_fake.text_reply("Hello.").body
    server.enqueue(ScriptedReply(body, stall_s=STALL_S), ScriptedReply(body))
    left: list[str] = []
    first_left = asyncio.Event()

    async def ask(waiting: bool) -> Any:
        if waiting:
            when_sent(lambda: (left.append("left"), first_left.set()))
        return await model.complete([{"role": "user", "content": "hi"}], max_tokens=20)

    watched = asyncio.create_task(ask(waiting=True))
    await asyncio.wait_for(first_left.wait(), timeout=10)
    assert not watched.done()  # it left, and its answer has not come yet
    assert (await watched).text == "Hello."
    assert (await ask(waiting=False)).text == "Hello."  # nobody waits on this one
    assert left == ["left"]

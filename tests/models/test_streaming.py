"""Streamed answers through the real openai and anthropic SDKs, against fakes that stream the
real wire format (server-sent events): text as it grows, tool turns not shown, retries and
fallbacks taking back what they showed, the first token in the trace."""

from __future__ import annotations

import pytest

from bot.models.offline import OfflineModel
from bot.tools.loop import run_loop
from tests.fakes import anthropic_server as anthropic_fake
from tests.fakes import openai_server as openai_fake
from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.models import (
    OWNER,
    Events,
    SleepRecorder,
    anthropic_model,
    contract_tools,
    openai_model,
)

ANSWER = "The meeting moved to Thursday at ten, in the small room."



async def test_openai_streams_the_answer_as_it_grows(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, events: Events) -> None:
    openai_server.enqueue(openai_fake.text_reply(ANSWER, prompt_tokens=30,
                                                 completion_tokens=12))
    seen: list[str] = []
    reply = await openai_model(openai_server, sleeps).complete(
        [{"role": "user", "content": "when is it?"}], purpose="agent", observer=events,
        on_text=seen.append)
    assert reply.text == ANSWER and seen[-1] == ANSWER
    assert len(seen) == len(ANSWER.split())  # one update per chunk, each the text so far
    assert all(ANSWER.startswith(text) for text in seen)
    sent = openai_server.requests[0].json
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (30, 12)
    [first] = events.of("first_token")
    assert first["purpose"] == "agent" and first["after_s"] >= 0
    assert openai_server.streamed == 1


async def test_anthropic_streams_the_answer_as_it_grows(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder, events: Events) -> None:
    anthropic_server.enqueue(anthropic_fake.text_reply(ANSWER, input_tokens=40,
                                                       output_tokens=14))
    seen: list[str] = []
    reply = await anthropic_model(anthropic_server, sleeps).complete(
        [{"role": "user", "content": "when is it?"}], purpose="agent", observer=events,
        on_text=seen.append)
    assert reply.text == ANSWER and seen[-1] == ANSWER
    assert len(seen) == len(ANSWER.split())
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (40, 14)
    assert len(events.of("first_token")) == 1 and anthropic_server.streamed == 1


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
async def test_a_tool_turn_is_not_shown_and_the_final_answer_is(
        provider: str, openai_server: FakeOpenAIServer, anthropic_server: FakeAnthropicServer,
        sleeps: SleepRecorder) -> None:
    if provider == "openai":
        openai_server.enqueue(
            openai_fake.tool_call_reply([("agenda", {"hours": 24})], text="Let me look."),
            openai_fake.text_reply(ANSWER))
        model = openai_model(openai_server, sleeps, role="big")
    else:
        anthropic_server.enqueue(
            anthropic_fake.tool_use_reply([("agenda", {"hours": 24})], text="Let me look."),
            anthropic_fake.text_reply(ANSWER))
        model = anthropic_model(anthropic_server, sleeps, role="big")
    seen: list[str] = []
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(model, [{"role": "user", "content": "what's on?"}],
                            contract_tools(calls), OWNER, on_text=seen.append)
    assert result.text == ANSWER and calls == [("agenda", {"hours": 24})]
    # what the tool turn said first was taken back before the answer was shown
    taken_back = seen.index("")
    assert all(text in ("Let", "Let me", "Let me look.") for text in seen[:taken_back])
    assert seen[taken_back + 1:] and all(ANSWER.startswith(t) for t in seen[taken_back + 1:])
    assert seen[-1] == ANSWER


async def test_a_retried_attempt_starts_the_shown_text_over(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(openai_fake.error_reply(503), openai_fake.text_reply(ANSWER))
    seen: list[str] = []
    reply = await openai_model(openai_server, sleeps).complete(
        [{"role": "user", "content": "when?"}], on_text=seen.append)
    assert reply.text == ANSWER and sleeps.delays == [0.5]
    assert seen[-1] == ANSWER and seen.count(ANSWER) == 1


async def test_a_provider_that_stays_down_takes_back_nothing_it_did_not_show(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(*[openai_fake.error_reply(503) for _ in range(3)])
    seen: list[str] = []
    reply = await openai_model(openai_server, sleeps).complete(
        [{"role": "user", "content": "hello?"}], on_text=seen.append)
    assert "offline" in reply.text and seen == []  # the fallback's answer is not streamed


async def test_the_offline_model_streams_word_by_word(events: Events) -> None:
    seen: list[str] = []
    reply = await OfflineModel(role="big").complete(
        [{"role": "user", "content": "what can you do"}], observer=events, on_text=seen.append)
    assert seen[-1] == reply.text.rstrip() and len(seen) == len(reply.text.split())
    assert len(events.of("first_token")) == 1
    calls = await OfflineModel(role="big").complete(
        [{"role": "user", "content": "remember the milk"}],
        tools=contract_tools().specs_for(OWNER), on_text=seen.append)
    assert calls.tool_calls and seen[-1] == reply.text.rstrip()  # a tool turn streams nothing

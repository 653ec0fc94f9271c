"""The openai provider through the real openai SDK against a fake Chat Completions server."""

from __future__ import annotations

import json

import pytest

from bot.models import ModelError, parse_intent
from bot.models.costs import SpendLog
from bot.tools.loop import run_loop
from tests.fakes.openai_server import FakeOpenAIServer, error_reply, text_reply, tool_call_reply
from tests.fakes.scripted_server import ScriptedReply
from tests.support.models import KEY, OWNER, Events, SleepRecorder, contract_tools, openai_model


async def test_plain_reply_normalised_with_usage_cost_and_event(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, events: Events,
        ledger: SpendLog) -> None:
    openai_server.enqueue(text_reply("Hello there", prompt_tokens=1000, completion_tokens=500))
    model = openai_model(openai_server, sleeps, ledger=ledger)
    reply = await model.complete(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hi"}],
        max_tokens=50, purpose="quick_reply", observer=events)
    assert (reply.text, reply.tool_calls, reply.provider) == ("Hello there", [], "openai")
    assert (reply.usage.input_tokens, reply.usage.output_tokens) == (1000, 500)
    assert reply.cost_usd == pytest.approx((1000 * 0.40 + 500 * 1.60) / 1e6)
    sent = openai_server.requests[0]
    assert sent.path == "/v1/chat/completions"
    assert sent.json["messages"] == [{"role": "system", "content": "Be brief."},
                                     {"role": "user", "content": "hi"}]
    assert sent.json["max_tokens"] == 50  # a compatible server gets the widely known name
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    [event] = events.of("model_call")
    assert event | {"duration_s": 0} == {
        "event": "model_call", "role": "small", "provider": "openai", "model": "gpt-4.1-mini",
        "purpose": "quick_reply", "input_tokens": 1000, "output_tokens": 500,
        "cost_usd": reply.cost_usd, "duration_s": 0}
    assert ledger.spent() == pytest.approx(reply.cost_usd)


async def test_tool_call_round_trip_through_run_loop(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, events: Events) -> None:
    openai_server.enqueue(tool_call_reply([("remember", {"text": "milk is out"})]),
                          text_reply("Noted: milk is out."))
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(openai_model(openai_server, sleeps, role="big", name="gpt-4.1"),
                            [{"role": "user", "content": "remember milk is out"}],
                            contract_tools(calls), OWNER, observer=events)
    assert result.text == "Noted: milk is out."
    assert result.iterations == 2
    assert calls == [("remember", {"text": "milk is out", "scope": "owner"})]
    first, second = (r.json for r in openai_server.requests)
    assert {t["function"]["name"] for t in first["tools"]} == {
        "remember", "agenda", "search_notes", "notify_owner"}
    remember_schema = next(t["function"] for t in first["tools"]
                           if t["function"]["name"] == "remember")
    assert remember_schema["parameters"] == {
        "type": "object", "required": ["text"],
        "properties": {"text": {"type": "string", "description": "what to remember"}}}
    assistant, tool = second["messages"][-2:]
    call_id = assistant["tool_calls"][0]["id"]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {
        "text": "milk is out"}
    assert tool == {"role": "tool", "tool_call_id": call_id,
                    "content": "saved note #1: milk is out"}
    assert [e["event"] for e in events] == ["model_call", "tool_call", "model_call", "loop_end"]
    assert events.of("tool_call")[0] | {"duration_s": 0} == {
        "event": "tool_call", "tool": "remember", "arguments": {"text": "milk is out"},
        "ok": True, "duration_s": 0}


async def test_429_waits_as_long_as_retry_after_says(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(error_reply(429, retry_after=2), text_reply("after the wait"))
    reply = await openai_model(openai_server, sleeps).complete([{"role": "user", "content": "x"}])
    assert reply.text == "after the wait"
    assert sleeps.delays == [2.0]
    assert len(openai_server.requests) == 2  # one retry layer: the SDK itself did not retry


async def test_500_then_success_backs_off_once(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(error_reply(500), error_reply(503), text_reply("third time"))
    reply = await openai_model(openai_server, sleeps).complete([{"role": "user", "content": "x"}])
    assert reply.text == "third time"
    assert sleeps.delays == [0.5, 1.0]  # exponential backoff without a retry-after


async def test_401_is_not_retried_and_says_so_without_the_key(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, events: Events) -> None:
    openai_server.enqueue(error_reply(401, f"Incorrect API key provided: {KEY}"))
    with pytest.raises(ModelError) as caught:
        await openai_model(openai_server, sleeps).complete(
            [{"role": "user", "content": "x"}], observer=events)
    assert caught.value.user_message == (
        "The OpenAI-compatible API rejected the key; check OPENAI_API_KEY.")
    assert not caught.value.transient and caught.value.status == 401
    assert KEY not in str(caught.value) and caught.value.__cause__ is None
    assert len(openai_server.requests) == 1 and sleeps.delays == []
    assert events.of("model_call")[0]["error"] == caught.value.user_message


async def test_provider_down_falls_back_to_offline_and_says_so(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, events: Events) -> None:
    openai_server.enqueue(*[error_reply(503)] * 3)
    model = openai_model(openai_server, sleeps)
    reply = await model.complete([{"role": "user", "content": "hello!"}],
                                 purpose="quick_reply", observer=events)
    assert reply.provider == "offline"
    assert reply.text.startswith("The OpenAI-compatible API had a server error (HTTP 503). "
                                 "The offline assistant answered instead:")
    assert "offline mode" in reply.text
    assert len(openai_server.requests) == 3
    failed, fallback = events.of("model_call")
    assert failed["provider"] == "openai" and "503" in failed["error"]
    assert fallback["provider"] == "offline" and fallback["fallback_from"] == "openai"
    # while marked down, the next call goes straight to offline instead of waiting again
    again = await model.complete([{"role": "user", "content": "thanks"}], purpose="quick_reply")
    assert again.provider == "offline" and len(openai_server.requests) == 3


async def test_time_out_is_retried_then_falls_back(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(text_reply("too late", stall_s=5), text_reply("too late", stall_s=5))
    model = openai_model(openai_server, sleeps, timeout=0.3, attempts=2)
    reply = await model.complete([{"role": "user", "content": "what is on today?"}],
                                 purpose="classify")
    assert reply.provider == "offline"
    assert json.loads(reply.text) == {"intent": "question", "urgency": 0.3}  # no note in JSON
    assert len(openai_server.requests) == 2 and sleeps.delays == [0.5]


async def test_reply_that_is_not_json_where_json_was_asked(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(text_reply("Sure! It sounds urgent to me."))
    text = "The server is down, please call me right now"
    reply = await openai_model(openai_server, sleeps).complete(
        [{"role": "user", "content": text}], purpose="classify")
    assert reply.provider == "openai"
    assert parse_intent(reply.text, text) == ("urgent", 0.9)  # the offline rules decided


async def test_unreadable_http_body_is_a_permanent_error(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder) -> None:
    openai_server.enqueue(ScriptedReply("<html>gateway says hi</html>"))
    with pytest.raises(ModelError) as caught:
        await openai_model(openai_server, sleeps).complete([{"role": "user", "content": "x"}])
    assert caught.value.user_message == (
        "The OpenAI-compatible API sent a reply that could not be read.")
    assert len(openai_server.requests) == 1


async def test_fake_server_in_a_thread_serves_the_async_client_in_the_test_loop(
        sleeps: SleepRecorder) -> None:
    with FakeOpenAIServer(default_text="default answer") as server:
        reply = await openai_model(server, sleeps).complete([{"role": "user", "content": "hi"}])
        assert reply.text == "default answer"
        assert await server.wait_for(lambda: len(server.requests)) == 1

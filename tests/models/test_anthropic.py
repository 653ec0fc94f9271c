"""The anthropic provider through the real anthropic SDK against a fake Messages API server."""

from __future__ import annotations

import pytest

from bot.models import GuardedModel, ModelError, parse_intent
from bot.models.anthropic import AnthropicClient
from bot.tools.loop import run_loop
from tests.fakes.anthropic_server import (
    FakeAnthropicServer,
    error_reply,
    text_reply,
    tool_use_reply,
)
from tests.support.models import (
    GUEST,
    KEY,
    OWNER,
    PRICES,
    Events,
    SleepRecorder,
    anthropic_model,
    contract_tools,
)


async def test_plain_reply_with_system_prompt_and_usage(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder, events: Events) -> None:
    anthropic_server.enqueue(text_reply("Hi!", input_tokens=2000, output_tokens=100))
    reply = await anthropic_model(anthropic_server, sleeps).complete(
        [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "hello"}],
        max_tokens=64, purpose="quick_reply", observer=events)
    assert (reply.text, reply.provider, reply.model) == ("Hi!", "anthropic", "claude-haiku-4-5")
    assert reply.cost_usd == pytest.approx((2000 * 1.0 + 100 * 5.0) / 1e6)
    sent = anthropic_server.requests[0]
    assert sent.path == "/v1/messages"
    # this SDK version sends the key as a bearer token; older ones used x-api-key
    assert KEY in (sent.headers.get("x-api-key"), sent.headers.get("authorization", "")[7:])
    assert sent.json["system"] == "Be brief."
    assert sent.json["max_tokens"] == 64
    assert sent.json["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hello"}]}]
    assert events.of("model_call")[0]["output_tokens"] == 100


async def test_tool_use_round_trip_through_run_loop(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder, events: Events) -> None:
    anthropic_server.enqueue(
        tool_use_reply([("agenda", {"hours": 24}), ("search_notes", {"query": "dentist"})],
                       text="Let me look."),
        text_reply("Dentist at 10:00."))
    calls: list[tuple[str, dict[str, object]]] = []
    result = await run_loop(anthropic_model(anthropic_server, sleeps, role="big",
                                            name="claude-sonnet-4-6"),
                            [{"role": "user", "content": "when is the dentist?"}],
                            contract_tools(calls), GUEST, observer=events)
    assert result.text == "Dentist at 10:00."
    assert calls == [("agenda", {"hours": 24}),
                     ("search_notes", {"query": "dentist", "scope": "telegram:7"})]
    first, second = (r.json for r in anthropic_server.requests)
    schemas = {t["name"]: t["input_schema"] for t in first["tools"]}
    assert schemas["agenda"] == {"type": "object",
                                 "properties": {"hours": {"type": "number"}}}
    assistant, results = second["messages"][1:]
    ids = [block["id"] for block in assistant["content"] if block["type"] == "tool_use"]
    assert assistant["content"][0] == {"type": "text", "text": "Let me look."}
    # both results travel back in one user turn, each naming its tool_use id
    assert results == {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": ids[0], "content": "10:00 Dentist\n14:00 Team sync"},
        {"type": "tool_result", "tool_use_id": ids[1],
         "content": "#4 The wifi password is on the fridge"}]}
    assert [e["event"] for e in events] == ["model_call", "tool_call", "tool_call", "model_call",
                                            "loop_end"]
    assert events[-1]["stop_reason"] == "final_answer"
    assert result.cost_usd == pytest.approx(sum(e["cost_usd"] for e in events.of("model_call")))


async def test_overloaded_529_then_429_with_retry_after_then_success(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder) -> None:
    anthropic_server.enqueue(error_reply(529), error_reply(429, retry_after=3),
                             text_reply("finally"))
    reply = await anthropic_model(anthropic_server, sleeps).complete(
        [{"role": "user", "content": "x"}])
    assert reply.text == "finally"
    assert sleeps.delays == [0.5, 3.0]
    assert len(anthropic_server.requests) == 3


async def test_401_gives_one_short_sentence(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder) -> None:
    anthropic_server.enqueue(error_reply(401, "invalid x-api-key"))
    with pytest.raises(ModelError) as caught:
        await anthropic_model(anthropic_server, sleeps).complete(
            [{"role": "user", "content": "x"}])
    assert str(caught.value) == "The Anthropic API rejected the key; check ANTHROPIC_API_KEY."
    assert len(anthropic_server.requests) == 1


async def test_400_is_permanent(anthropic_server: FakeAnthropicServer,
                                sleeps: SleepRecorder) -> None:
    anthropic_server.enqueue(error_reply(400, "messages: roles must alternate"))
    with pytest.raises(ModelError, match="rejected the request as invalid"):
        await anthropic_model(anthropic_server, sleeps).complete(
            [{"role": "user", "content": "x"}])
    assert sleeps.delays == []


async def test_time_out_then_offline_agent_acts_through_tools(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder, events: Events) -> None:
    anthropic_server.enqueue(text_reply("late", stall_s=5))
    calls: list[tuple[str, dict[str, object]]] = []
    model = anthropic_model(anthropic_server, sleeps, role="big", timeout=0.3, attempts=1)
    result = await run_loop(model, [{"role": "user", "content": "remember the gate code is 4521"}],
                            contract_tools(calls), OWNER, observer=events)
    assert calls == [("remember", {"text": "the gate code is 4521", "scope": "owner"})]
    assert result.text.startswith("The Anthropic API timed out. The offline assistant answered")
    assert "Saved to your notes: the gate code is 4521" in result.text
    assert result.providers == ["offline", "offline"]
    assert len(anthropic_server.requests) == 1  # marked down: the second turn did not wait again


async def test_classify_reply_that_is_not_json(
        anthropic_server: FakeAnthropicServer, sleeps: SleepRecorder) -> None:
    anthropic_server.enqueue(text_reply('{"intent": "smalltalk", "urgency": 7}'))
    reply = await anthropic_model(anthropic_server, sleeps).complete(
        [{"role": "user", "content": "thanks a lot!"}], purpose="classify")
    assert parse_intent(reply.text, "thanks a lot!") == ("social", 0.1)


async def test_a_missing_key_is_said_before_any_request(sleeps: SleepRecorder) -> None:
    model = GuardedModel(AnthropicClient(name="claude-haiku-4-5", api_key=None), role="small",
                         prices=PRICES, sleep=sleeps)
    with pytest.raises(ModelError, match=r"^No ANTHROPIC_API_KEY is set"):
        await model.complete([{"role": "user", "content": "hi"}])


def test_fake_server_in_a_thread_serves_a_client_in_another_loop() -> None:
    import anthropic

    with FakeAnthropicServer() as server:
        server.enqueue(text_reply("from the thread"))
        client = anthropic.Anthropic(api_key=KEY, base_url=server.base_url, max_retries=0)
        message = client.messages.create(model="claude-haiku-4-5", max_tokens=10,
                                         messages=[{"role": "user", "content": "hi"}])
        client.close()
        assert message.content[0].text == "from the thread"  # type: ignore[union-attr]
        assert server.wait_for_sync(lambda: len(server.requests)) == 1

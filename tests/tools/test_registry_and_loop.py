"""The tool registry, its policy, and the loop's handling of tool failures and of endless tools."""

from __future__ import annotations

import asyncio
from typing import Literal

from bot.models import ModelError
from bot.tools.loop import run_loop, stopped_text
from bot.tools.registry import Caller, ToolRegistry, spec_from_function
from tests.fakes.model import FakeModel
from tests.support.models import GUEST, KEY, OWNER, Events, contract_tools


def test_schema_comes_from_type_hints_and_docstring() -> None:
    def add_event(title: str, when: str, minutes: int = 30, tags: list[str] | None = None,
                  kind: Literal["call", "visit"] = "call", *, caller: Caller) -> str:
        """Put an event in the calendar.

        Args:
            title: what the event is called
            minutes (int): how long it lasts
        """
        return title

    spec = spec_from_function(add_event)
    assert spec.name == "add_event" and spec.description == "Put an event in the calendar."
    assert spec.parameters == {
        "type": "object", "required": ["title", "when"],
        "properties": {
            "title": {"type": "string", "description": "what the event is called"},
            "when": {"type": "string"},
            "minutes": {"type": "integer", "description": "how long it lasts"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "kind": {"type": "string", "enum": ["call", "visit"]}}}


async def test_policy_owner_gets_everything_others_not_owner_only_tools() -> None:
    registry = contract_tools()

    def send_message(to: str, text: str) -> str:
        """Message someone on the owner's behalf."""
        return "sent"

    registry.register(send_message, owner_only=True)
    assert [s.name for s in registry.specs_for(OWNER)] == [
        "remember", "agenda", "search_notes", "notify_owner", "send_message"]
    assert "send_message" not in [s.name for s in registry.specs_for(GUEST)]
    assert await registry.call("send_message", {"to": "x", "text": "y"}, OWNER) == "sent"
    refused = await registry.invoke("send_message", {"to": "x", "text": "y"}, GUEST)
    assert refused.text == "not allowed: send_message is only available to the owner."
    assert refused.ok is False


async def test_a_model_calling_a_refused_tool_gets_an_observation_not_a_crash(
        events: Events) -> None:
    registry = ToolRegistry()
    sent: list[str] = []

    def send_message(text: str) -> str:
        """Message someone."""
        sent.append(text)
        return "sent"

    registry.register(send_message, owner_only=True)
    model = FakeModel(role="big")
    model.enqueue(tool_calls=[("send_message", {"text": "hi"})])
    model.enqueue(text="I can't do that for you.")
    result = await run_loop(model, [{"role": "user", "content": "message Bob"}], registry, GUEST,
                            observer=events)
    assert sent == [] and result.text == "I can't do that for you."
    assert model.history[0].tools is None  # nothing was offered to the guest
    assert model.history[1].messages[-1].content.startswith("not allowed:")
    assert events.of("tool_call")[0]["ok"] is False


async def test_caller_is_injected_and_cannot_be_forged_by_the_model() -> None:
    calls: list[tuple[str, dict[str, object]]] = []
    registry = contract_tools(calls)
    text = await registry.call("search_notes", {"query": "x", "caller": "owner"}, GUEST)
    assert text.startswith("#4") and calls == [("search_notes",
                                                {"query": "x", "scope": "telegram:7"})]


async def test_failures_become_observations_with_secrets_hidden() -> None:
    registry = ToolRegistry(secrets=[KEY])

    def fetch(url: str) -> str:
        """Fetch a page."""
        raise ConnectionError(f"cannot reach {url}?key={KEY}")

    async def slow_sum(a: int, b: int) -> int:
        """Add two numbers."""
        await asyncio.sleep(0)
        return a + b

    registry.register(fetch)
    registry.register(slow_sum)
    failed = await registry.invoke("fetch", {"url": "http://x"}, OWNER)
    assert failed.ok is False and KEY not in failed.text
    assert failed.text == ("error: fetch failed: ConnectionError: cannot reach "
                           "http://x?key=[secret]")
    assert (await registry.invoke("slow_sum", {"a": 2, "b": 3}, OWNER)).text == "5"
    bad = await registry.call("slow_sum", {"a": 2}, OWNER)
    assert bad.startswith("error: bad arguments for slow_sum: missing a required argument: 'b'")
    unknown = await registry.call("nope", {}, OWNER)
    assert unknown.startswith("error: there is no tool named 'nope'")


async def test_a_tool_exception_is_fed_back_and_the_loop_continues(events: Events) -> None:
    registry = ToolRegistry()

    def agenda(hours: float) -> str:
        """Read the calendar."""
        raise RuntimeError("calendar file is missing")

    registry.register(agenda)
    model = FakeModel()
    model.enqueue(tool_calls=[("agenda", {"hours": 24})])
    model.enqueue(text="Your calendar could not be read.")
    result = await run_loop(model, [{"role": "user", "content": "agenda?"}], registry, OWNER,
                            observer=events)
    assert result.text == "Your calendar could not be read."
    observation = model.history[1].messages[-1]
    assert observation.role == "tool"
    assert observation.content == "error: agenda failed: RuntimeError: calendar file is missing"
    assert observation.tool_call_id == model.history[1].messages[-2].tool_calls[0].id


async def test_max_iterations_ends_with_a_clear_answer() -> None:
    model = FakeModel()
    for _ in range(3):
        model.enqueue(tool_calls=[("agenda", {"hours": 1})])
    result = await run_loop(model, [{"role": "user", "content": "loop forever"}],
                            contract_tools(), OWNER, max_iterations=3)
    assert result.stopped and result.iterations == 3 and result.tool_calls == 3
    assert result.text == stopped_text(3) == (
        "I stopped after 3 steps without finishing; please ask again more specifically.")
    assert model.pending == 0 and len(model.history) == 3


async def test_a_model_error_ends_the_loop_with_its_sentence() -> None:
    model = FakeModel()
    model.enqueue(error=ModelError("The OpenAI API rejected the key; check OPENAI_API_KEY."))
    result = await run_loop(model, [{"role": "user", "content": "hi"}], contract_tools(), OWNER)
    assert result.error == result.text == "The OpenAI API rejected the key; check OPENAI_API_KEY."


async def test_tool_call_event_arguments_are_scrubbed_and_cut(events: Events) -> None:
    model = FakeModel()
    model.enqueue(tool_calls=[("remember", {"text": f"my key is {KEY} " + "x" * 500})])
    model.enqueue(text="ok")
    await run_loop(model, [{"role": "user", "content": "remember"}], contract_tools(), OWNER,
                   observer=events)
    shown = events.of("tool_call")[0]["arguments"]["text"]
    assert KEY not in shown and "[secret]" in shown and len(shown) <= 201


async def test_a_reply_asking_for_fifty_tool_calls_runs_eight_and_refuses_the_rest() -> None:
    from bot.tools.loop import MAX_CALLS_PER_TURN

    ran: list[int] = []
    registry = ToolRegistry()

    def note(number: int) -> str:
        """Record a number.

        Args:
            number: which one.
        """
        ran.append(number)
        return f"noted {number}"

    registry.register(note)
    events = Events()
    model = FakeModel(role="big")
    model.enqueue(tool_calls=[("note", {"number": n}) for n in range(50)])
    model.enqueue(text="Done.")
    result = await run_loop(model, [{"role": "user", "content": "note 50 things"}], registry,
                            OWNER, observer=events)
    assert MAX_CALLS_PER_TURN == 8
    assert ran == list(range(8)) and result.text == "Done."
    assert result.tool_calls == 8 and result.refused_calls == 42
    answers = [m for m in model.history[1].messages if m.role == "tool"]
    assert len(answers) == 50  # every call the model made gets its answer
    assert all(a.content.startswith("Not run: at most 8 tool calls") for a in answers[8:])
    calls = events.of("tool_call")
    assert [c.get("refused") for c in calls].count("too_many_calls") == 42
    assert events.of("loop_end")[-1]["refused_calls"] == 42

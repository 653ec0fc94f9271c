"""The daily budget is a hard cap: 40 calls at once never spend more than it, small ones too."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bot.models.base import Message, ToolSpec
from bot.models.costs import SpendLog
from bot.models.guarded import input_token_bound
from bot.schema import open_database
from tests.fakes.openai_server import FakeOpenAIServer, error_reply, hung_reply
from tests.support.models import PRICES, SleepRecorder, openai_model

BUDGET = 0.05  # gpt-4.1 at 1000 output tokens: about $0.008 a call, so six fit


def spent_at_the_provider(server: FakeOpenAIServer) -> float:
    """What the fake provider billed, at the test prices."""
    return sum(PRICES.cost(model, prompt, completion)
               for model, prompt, completion in server.billed)


async def test_forty_calls_at_once_spend_at_most_the_budget(
        sleeps: SleepRecorder, tmp_path: Path) -> None:
    # two ledgers on two databases of one file: the hold is in the database, not in memory
    ledgers = [SpendLog(open_database(tmp_path / "frontdesk.db")) for _ in range(2)]
    async with FakeOpenAIServer(bill_in_full=True) as server:
        models = [openai_model(server, sleeps, role=role, name="gpt-4.1", ledger=ledger,
                               budget=BUDGET)
                  for role, ledger in zip(("big", "small"), ledgers, strict=True)]
        replies = await asyncio.gather(*[
            models[n % 2].complete([{"role": "user", "content": f"question number {n}"}],
                                   max_tokens=1000)
            for n in range(40)])
        for model in models:
            await model.aclose()
    answered = [r for r in replies if r.refused is None]
    refused = [r for r in replies if r.refused is not None]
    assert spent_at_the_provider(server) <= BUDGET
    assert len(answered) == len(server.requests) == len(server.billed) == 6
    assert all(r.provider == "openai" and r.text == "fake reply" for r in answered)
    assert len(refused) == 34 and all(r.provider == "offline" for r in refused)
    assert all(r.text.startswith("Today's model budget of $0.05 is used up") for r in refused)
    assert ledgers[0].spent() == pytest.approx(spent_at_the_provider(server))
    assert ledgers[1].held() == 0.0  # every hold was settled to the real cost


async def test_a_call_the_provider_refused_frees_its_hold_and_a_time_out_keeps_it(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, ledger: SpendLog) -> None:
    openai_server.enqueue(error_reply(400), hung_reply())
    model = openai_model(openai_server, sleeps, name="gpt-4.1", ledger=ledger, budget=1.0,
                         attempts=1, timeout=0.3)
    with pytest.raises(Exception, match="rejected the request"):
        await model.complete([{"role": "user", "content": "bad"}], max_tokens=100)
    assert ledger.held() == 0.0 and ledger.spent() == 0.0  # a 400 costs nothing
    late = await model.complete([{"role": "user", "content": "slow"}], max_tokens=100)
    assert late.provider == "offline" and late.text.startswith("The OpenAI-compatible API "
                                                               "timed out.")
    worst = PRICES.cost("gpt-4.1", input_token_bound([Message("user", "slow")], None), 100)
    assert ledger.held() == pytest.approx(worst)  # it may have been billed: the worst case
    await model.aclose()


def test_the_input_bound_covers_every_byte_and_the_tools() -> None:
    plain = input_token_bound([Message("system", "Be brief."), Message("user", "héllo")], None)
    assert plain == 16 + (8 + 9) + (8 + 6)
    tool = ToolSpec("remember", "Save a note.", {"type": "object"})
    assert input_token_bound([Message("user", "hi")], [tool]) > plain + 1024

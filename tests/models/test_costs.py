"""Prices, the cost ledger in SQLite, the daily budget, and choosing a provider."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from bot.config.settings import Settings
from bot.models import GuardedModel, OfflineModel, build_models
from bot.models.costs import DEFAULT_PRICES, PriceTable, PriceTableError, SpendLog, load_prices
from bot.schema import open_database
from tests.fakes.openai_server import FakeOpenAIServer, text_reply
from tests.support.models import Events, SleepRecorder, openai_model


def test_shipped_price_table_prices_the_default_models() -> None:
    table = PriceTable.load([DEFAULT_PRICES])
    for name in ("claude-haiku-4-5", "claude-sonnet-4-6", "gpt-4.1-mini", "gpt-4.1"):
        assert table.price(name) is not None, name
    # a dated version uses its family's price; a local model costs nothing
    assert table.price("claude-haiku-4-5-20251001") == table.price("claude-haiku-4-5")
    assert table.price("gpt-4.1-mini-2025-04-14") == table.price("gpt-4.1-mini")
    assert table.cost("llama3.2:3b", 10_000, 10_000) == 0.0


def test_home_prices_override_the_shipped_ones(tmp_path: Path) -> None:
    (tmp_path / "prices.toml").write_text('[models."gpt-4.1"]\ninput = 1\noutput = 2\n')
    table = load_prices(Settings(home=tmp_path))
    assert table.cost("gpt-4.1", 1_000_000, 1_000_000) == 3.0
    assert table.price("claude-haiku-4-5") is not None  # the rest still comes from config/


def test_a_broken_price_entry_names_the_file_and_model(tmp_path: Path) -> None:
    broken = tmp_path / "prices.toml"
    broken.write_text('[models."my-model"]\ninput = "cheap"\n')
    with pytest.raises(PriceTableError, match=r'prices.toml: \[models."my-model"\] needs'):
        PriceTable.load([broken])


def test_ledger_persists_per_day_in_the_database(tmp_path: Path) -> None:
    now = [1_750_000_000.0]
    ledger = SpendLog(open_database(tmp_path / "f.db"), clock=lambda: now[0])
    ledger.record(provider="openai", model="gpt-4.1", role="big", purpose="agent",
                  input_tokens=100, output_tokens=10, cost_usd=0.25)
    ledger.record(provider="openai", model="gpt-4.1", role="big", purpose="agent",
                  input_tokens=50, output_tokens=5, cost_usd=0.5)
    reopened = SpendLog(open_database(tmp_path / "f.db"), clock=lambda: now[0])
    assert reopened.spent() == pytest.approx(0.75)
    [(provider, model, calls, tokens_in, tokens_out, usd)] = reopened.by_model()
    assert (provider, model, calls, tokens_in, tokens_out) == ("openai", "gpt-4.1", 2, 150, 15)
    assert usd == pytest.approx(0.75)
    now[0] += 86_400  # tomorrow starts from zero
    assert reopened.spent() == 0.0


async def test_past_the_budget_every_call_gets_the_offline_answer_saying_why(
        openai_server: FakeOpenAIServer, sleeps: SleepRecorder, events: Events,
        ledger: SpendLog) -> None:
    openai_server.enqueue(text_reply("big answer", model="gpt-4.1", prompt_tokens=100_000,
                                     completion_tokens=0))
    big = openai_model(openai_server, sleeps, role="big", name="gpt-4.1", ledger=ledger,
                       budget=0.10)
    small = openai_model(openai_server, sleeps, role="small", ledger=ledger, budget=0.10)
    first = await big.complete([{"role": "user", "content": "x"}])
    assert first.cost_usd == pytest.approx(0.20) and first.refused is None
    assert ledger.spent() == pytest.approx(0.20) and ledger.held() == 0.0  # settled
    refused = await big.complete([{"role": "user", "content": "hello"}], observer=events)
    reason = ("Today's model budget of $0.10 is used up ($0.20 spent or in progress; this "
              "call could cost up to $0.0083), so model answers resume tomorrow.")
    assert refused.refused == reason and refused.provider == "offline"
    assert refused.text.startswith(reason + " The offline assistant answered instead:\n")
    small_refused = await small.complete([{"role": "user", "content": "hi"}])
    assert small_refused.refused and small_refused.provider == "offline"  # small ones too
    assert len(openai_server.requests) == 1  # neither refused call reached the provider
    assert events.of("model_call")[0]["error"] == reason
    assert events.of("model_call")[0]["refused"] is True
    offline = await OfflineModel(role="big").complete([{"role": "user", "content": "hi"}])
    assert offline.provider == "offline"


def test_build_models_follows_the_provider_choice(tmp_path: Path) -> None:
    offline = build_models(Settings.from_env({"FRONTDESK_HOME": str(tmp_path)}))
    assert (offline.small.provider, offline.big.provider) == ("offline", "offline")
    assert not (tmp_path / "frontdesk.db").exists()  # nothing to record offline
    local = build_models(Settings.from_env({
        "FRONTDESK_HOME": str(tmp_path), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
        "FRONTDESK_SMALL_MODEL": "llama3.2", "FRONTDESK_BIG_MODEL": "qwen2.5:14b"}))
    assert isinstance(local.big, GuardedModel)
    assert (local.small.provider, local.small.name, local.big.name) == (
        "openai", "llama3.2", "qwen2.5:14b")
    claude = build_models(Settings.from_env({"FRONTDESK_HOME": str(tmp_path),
                                             "ANTHROPIC_API_KEY": "k"}))
    assert (claude.small.provider, claude.small.name, claude.big.role) == (
        "anthropic", "claude-haiku-4-5", "big")


async def test_a_local_server_needs_no_key(openai_server: FakeOpenAIServer,
                                           tmp_path: Path) -> None:
    models = build_models(Settings.from_env({"FRONTDESK_HOME": str(tmp_path),
                                             "OPENAI_BASE_URL": openai_server.base_url}))
    openai_server.enqueue(text_reply("local hello"))
    reply = await models.small.complete([{"role": "user", "content": "hi"}])
    assert (reply.text, reply.provider) == ("local hello", "openai")
    assert openai_server.requests[0].headers["authorization"].startswith("Bearer ")


def modules_loaded_by(imports: str, prefixes: tuple[str, ...]) -> list[str]:
    """The modules under ``prefixes`` that a fresh interpreter has after ``import <imports>``."""
    code = (f"import sys, {imports}; print(sorted(m for m in sys.modules "
            f"if m.split('.')[0] in {prefixes!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=Path(__file__).parents[2])
    return list(ast.literal_eval(out.stdout.strip()))


def test_importing_the_models_imports_no_sdk() -> None:
    assert modules_loaded_by("bot.models, bot.tools.loop, bot.tools.registry, bot.models.costs",
                             ("anthropic", "openai")) == []


def test_graphs_agent_nodes_imports_nothing_from_bot() -> None:
    assert modules_loaded_by("graphs.agent_nodes", ("bot",)) == []

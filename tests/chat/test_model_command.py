"""`/model`: the owner shows, picks and resets a chat's big model; it lasts, and costs follow it.

Through the real gateway with the fake models of ``tests/support/harness.py``; the preset
models are made by the configured provider (offline here, so the preset's model answers and
names itself in the trace), and the budget test uses the real openai SDK against the fake
OpenAI server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.chat.decisions import NOT_OWNER
from bot.config.banner import general_lines
from bot.config.settings import Settings
from bot.dashboard.data import run_detail
from bot.models import build_models, model_maker
from bot.models.choices import ChatBigModel, ModelChoices
from bot.models.costs import SpendLog
from bot.schema import open_database
from graphs.protocols import chosen_model
from sqlitedb import connect
from tests.fakes.openai_server import FakeOpenAIServer
from tests.support.harness import GUEST, Harness, HarnessFactory

PRESETS = {"FRONTDESK_MODEL_PRESETS": "fast=offline-fast,deep=o3"}


def big_models_called(harness: Harness, run_id: str | None) -> set[str]:
    """The models of the big-model calls the run made, from its trace."""
    assert run_id is not None
    return {str(e["model"]) for e in harness.services.flows.store.events(run_id)
            if e["event"] == "model_call" and e.get("role") == "big"}


async def test_model_shows_the_models_and_the_presets(make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PRESETS)
    shown = (await harness.send("/model")).text
    assert shown.splitlines()[0] == "This chat uses: small fake-small, big fake-big (the default)."
    assert "- fast: offline-fast" in shown and "- deep: o3" in shown
    none = await make_harness()  # the same home, no presets configured
    assert "FRONTDESK_MODEL_PRESETS" in (await none.send("/model")).text


async def test_model_name_sets_the_chats_big_model_and_reset_goes_back(
        make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PRESETS)
    assert (await harness.send("/model deep")).text == \
        "This chat's big model is now o3 (preset deep)."
    asked = await harness.send("what is the capital of peru?")
    assert asked.route == "full_agent"
    assert big_models_called(harness, asked.run_id) == {"o3"}  # the trace names it
    assert harness.big.history == []  # the default big model was not asked
    detail = run_detail(harness.services.flows.store, harness.services.flows.runs.registry,
                        asked.run_id or "")
    assert detail is not None and "o3" in detail["models"]  # the dashboard's run page
    assert "big o3 (preset deep)" in (await harness.send("/model")).text
    assert harness.services.models.choices.chosen() == [("telegram", "100", "deep")]
    other = await harness.send("what is the capital of chile?", chat="elsewhere")
    assert big_models_called(harness, other.run_id) == {"fake-big"}  # only that chat
    assert "back to the default, fake-big" in (await harness.send("/model reset")).text
    again = await harness.send("what is the capital of bolivia?")
    assert big_models_called(harness, again.run_id) == {"fake-big"}
    assert "no preset 'huge'" in (await harness.send("/model huge")).text


async def test_a_guests_model_is_refused_and_changes_nothing(
        make_harness: HarnessFactory) -> None:
    harness = await make_harness(**PRESETS)
    assert (await harness.send("/model deep", GUEST)).text == NOT_OWNER
    assert (await harness.send("/model", GUEST)).text == NOT_OWNER
    assert harness.services.models.choices.chosen() == []
    asked = await harness.send("what is the capital of peru?", GUEST)
    assert big_models_called(harness, asked.run_id) == {"fake-big"}


async def test_the_choice_survives_a_restart_and_shows_in_the_banner(
        make_harness: HarnessFactory) -> None:
    first = await make_harness(**PRESETS)
    await first.send("/model fast")
    restarted = await make_harness(**PRESETS)
    assert "big offline-fast (preset fast)" in (await restarted.send("/model")).text
    asked = await restarted.send("what is the capital of peru?")
    assert big_models_called(restarted, asked.run_id) == {"offline-fast"}
    lines = general_lines(restarted.services.settings, ("s", "b"), "1",
                          restarted.services.models.choices.chosen())
    assert any("fast offline-fast, deep o3 (/model)" in line for line in lines)
    assert any("telegram chat 100: big offline-fast (fast)" in line for line in lines)


def test_bad_presets_and_window_name_their_variable(tmp_path: Path) -> None:
    for bad in ("fast", "fast=", "=o3", "a=x,a=y", "two words=o3"):
        with pytest.raises(ValueError, match="FRONTDESK_MODEL_PRESETS"):
            Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "FRONTDESK_MODEL_PRESETS": bad})
    for bad in ("-1", "six", "9"):
        with pytest.raises(ValueError, match="FRONTDESK_MERGE_WINDOW"):
            Settings.from_env({"FRONTDESK_HOME": str(tmp_path), "FRONTDESK_MERGE_WINDOW": bad})
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path),
                                  "FRONTDESK_MODEL_PRESETS": " Fast = gpt-4.1-mini , deep=o3"})
    assert settings.model_presets == (("fast", "gpt-4.1-mini"), ("deep", "o3"))
    assert settings.merge_window == 1.5


async def test_the_budget_holds_a_call_at_the_chosen_models_prices(tmp_path: Path) -> None:
    """A budget too small for the default big model's worst case (gpt-4.1 at $8 per million
    output tokens) but large enough for the cheap preset's (gpt-4.1-nano at $0.40)."""
    async with FakeOpenAIServer() as server:
        settings = Settings.from_env({
            "FRONTDESK_HOME": str(tmp_path), "OPENAI_API_KEY": "sk-test",
            "OPENAI_BASE_URL": server.base_url, "FRONTDESK_BIG_MODEL": "gpt-4.1",
            "FRONTDESK_DAILY_BUDGET_USD": "0.002", "FRONTDESK_MODEL_PRESETS": "cheap=gpt-4.1-nano"})
        spend = SpendLog.open(settings)
        default = build_models(settings, spend_log=spend).big
        choices = ModelChoices(open_database(settings.database), settings.model_presets)
        big = ChatBigModel(default, choices, model_maker(settings, spend_log=spend))
        ask = [{"role": "user", "content": "hello"}]
        refused = await chosen_model(big, ("telegram", "1")).complete(ask, max_tokens=1024)
        assert refused.refused and server.requests == []  # $0.0082 worst case: over budget
        choices.choose("telegram", "1", "cheap")
        answered = await chosen_model(big, ("telegram", "1")).complete(ask, max_tokens=1024)
        assert answered.refused is None and answered.text == "fake reply"
        assert [r.json["model"] for r in server.requests if r.json] == ["gpt-4.1-nano"]
        with connect(settings.database) as db:
            calls = db.execute("SELECT model, role FROM costs_calls").fetchall()
        assert calls == [("gpt-4.1-nano", "big")]

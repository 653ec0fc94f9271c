"""The start-up banner's lines: a real provider names both models, offline says so,
a missing owner id says how to find it."""

from __future__ import annotations

from bot.config.banner import adapter_line, general_lines
from bot.config.settings import Settings
from bot.models import Models, build_models


def names(models: Models) -> tuple[str, str]:
    return models.small.name, models.big.name


def test_a_provider_names_both_models_and_nothing_secret() -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": "/tmp/banner", "ANTHROPIC_API_KEY": "sk-x1y2z3",
                                  "FRONTDESK_BIG_MODEL": "claude-opus-4-1",
                                  "FRONTDESK_GRAPH_WORKFLOWS": "0"})
    lines = general_lines(settings, names(build_models(settings)), "1.2.3")
    assert lines[0] == "Frontdesk 1.2.3"
    assert "anthropic, small claude-haiku-4-5, big claude-opus-4-1" in lines[1]
    assert "off (plain agent loop)" in lines[2] and "/tmp/banner" in lines[-1]
    assert not any("sk-x1y2z3" in line for line in lines)


def test_offline_and_a_missing_owner() -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": "/tmp/banner"})
    assert "offline" in general_lines(settings, names(build_models(settings)), "1")[1]
    line = adapter_line("Telegram", "@bot", "1", None, frozenset())
    assert "owner not set (TELEGRAM_OWNER_ID" in line and "shows your id" in line
    assert "also allowed: nobody else" in line

"""The start-up banner of `frontdesk run`: what is active, one line each, on stderr.

The general part (models, graph mode, pairing, data directory) is printed before the
adapters start; each adapter adds its line once the platform has said who the bot is (getMe,
Discord's READY), and the dashboard its URL once it listens. stderr, so the console chat's
stdout stays the conversation. Nothing secret is printed: no token, no key.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from bot.config.settings import Settings

OWNER_VARS = {"Telegram": "TELEGRAM_OWNER_ID", "Discord": "DISCORD_OWNER_ID"}


def announce(line: str) -> None:
    """One banner line, at once (a service manager's journal shows it as it happens)."""
    print(line, file=sys.stderr, flush=True)


def general_lines(settings: Settings, model_names: tuple[str, str], version: str) -> list[str]:
    """Frontdesk's own part of the banner (``model_names``: the small and the big model)."""
    if settings.model_provider == "offline":
        model = "offline (no model provider configured: built-in rules and templates)"
    else:
        model = (f"{settings.model_provider}, small {model_names[0]}, big {model_names[1]}")
    graph = "on (triage graph)" if settings.graph_workflows else "off (plain agent loop)"
    return [f"Frontdesk {version}",
            f"  Models:     {model}",
            f"  Graph mode: {graph}",
            f"  Pairing:    {settings.pairing}",
            f"  Data:       {settings.home}"]


def adapter_line(platform: str, name: str, bot_id: str, owner: str | None,
                 allowed: Iterable[str]) -> str:
    """``Telegram: @bot (id …), owner …, also allowed: …``; a missing owner says what to do."""
    others = ", ".join(sorted(allowed)) or "nobody else"
    who = (f"owner {owner}" if owner else
           f"owner not set ({OWNER_VARS.get(platform, 'the owner id')}: write to the bot and "
           "this terminal shows your id)")
    return f"  {platform + ':':<11} {name} (id {bot_id}), {who}, also allowed: {others}"

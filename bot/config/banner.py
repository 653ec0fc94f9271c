"""The start-up banner of `frontdesk run`: what is active, one line each, on stderr.

The general part (models, graph mode, pairing, data directory) is printed before the
adapters start; each adapter adds its line once the platform has said who the bot is (getMe,
Discord's READY), and the dashboard its URL once it listens. stderr, so the console chat's
stdout stays the conversation. Nothing secret is printed: no token, no key.

``frontdesk run`` also gives the process's ``BANNER`` its ``Startup`` (``BANNER.begin``; the
banner is stderr's, and stderr is the process's, so it is one per process, not a run's hidden
state): under systemd each line is printed plain (no indent, no aligned columns; in the
journal with a "notice" priority), and the adapters and the dashboard announcing themselves
is how the run knows that they serve (then it tells systemd READY=1).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterable

from bot.config.settings import Settings

OWNER_VARS = {"Telegram": "TELEGRAM_OWNER_ID", "Discord": "DISCORD_OWNER_ID"}
JOURNAL_NOTICE = "<5>"  # the syslog priority prefix journald reads: "notice"


class Startup:
    """The parts a run waits for (``Telegram``, ``Discord``, ``Dashboard``) and how its banner
    is printed; ``ready`` is set once every part has announced itself."""

    def __init__(self, parts: Iterable[str], *, plain: bool = False,
                 journal: bool = False) -> None:
        self.waiting = set(parts)
        self.plain = plain or journal  # under a service manager: no layout
        self.journal = journal  # stderr is the journal: lines carry a priority
        self.ready = asyncio.Event()
        if not self.waiting:
            self.ready.set()

    def arrived(self, part: str) -> None:
        """A part serves now."""
        self.waiting.discard(part)
        if not self.waiting:
            self.ready.set()

    def shown(self, line: str) -> str:
        """A banner line as this run prints it."""
        if not self.plain:
            return line
        return (JOURNAL_NOTICE if self.journal else "") + " ".join(line.split())


class Banner:
    """The banner of this process: its lines on stderr, as the ``Startup`` begun wants them."""

    def __init__(self) -> None:
        self.startup: Startup | None = None

    def begin(self, startup: Startup | None) -> None:
        """``frontdesk run`` starts (None: it ended): its lines and parts go to ``startup``."""
        self.startup = startup

    def announce(self, line: str) -> None:
        """One banner line, at once (a service manager's journal shows it as it happens)."""
        startup = self.startup
        print(startup.shown(line) if startup else line, file=sys.stderr, flush=True)

    def arrived(self, part: str) -> None:
        """Tell the run's ``Startup`` (if any) that a part serves now."""
        if self.startup is not None:
            self.startup.arrived(part)


BANNER = Banner()  # the process's one stderr banner


def announce(line: str) -> None:
    """One banner line, at once (``BANNER.announce``)."""
    BANNER.announce(line)


def arrived(part: str) -> None:
    """A part serves now (``BANNER.arrived``)."""
    BANNER.arrived(part)


def general_lines(settings: Settings, model_names: tuple[str, str], version: str,
                  chosen: Iterable[tuple[str, str, str]] = ()) -> list[str]:
    """Frontdesk's own part of the banner (``model_names``: the small and the big model;
    ``chosen``: the chats whose big model is a /model preset, as (platform, chat, preset))."""
    if settings.model_provider == "offline":
        model = "offline (no model provider configured: built-in rules and templates)"
    else:
        model = (f"{settings.model_provider}, small {model_names[0]}, big {model_names[1]}")
    graph = "on (triage graph)" if settings.graph_workflows else "off (plain agent loop)"
    presets = dict(settings.model_presets)
    per_chat = [f"  Presets:    {', '.join(f'{n} {m}' for n, m in presets.items())} (/model)"]
    per_chat += [f"              {platform} chat {chat}: big {presets[preset]} ({preset})"
                 for platform, chat, preset in chosen if preset in presets]
    return [f"Frontdesk {version}",
            f"  Models:     {model}", *(per_chat if presets else []),
            f"  Graph mode: {graph}",
            f"  Pairing:    {settings.pairing}",
            f"  Data:       {settings.home}"]


def adapter_line(platform: str, name: str, bot_id: str, owner: str | None,
                 allowed: Iterable[str]) -> str:
    """``Telegram: @bot (id …), owner …, also allowed: …``; a missing owner says what to do.

    An adapter asks for its line once the platform has said who the bot is, right before it
    starts taking messages: that counts it as serving (``arrived``)."""
    arrived(platform)
    others = ", ".join(sorted(allowed)) or "nobody else"
    who = (f"owner {owner}" if owner else
           f"owner not set ({OWNER_VARS.get(platform, 'the owner id')}: write to the bot and "
           "this terminal shows your id)")
    return f"  {platform + ':':<11} {name} (id {bot_id}), {who}, also allowed: {others}"

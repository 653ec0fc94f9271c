"""A text-only start loads none of the heavy libraries that answering a text does not need.

Structural, never a stopwatch: in a fresh interpreter, build what ``frontdesk run`` builds for
a Telegram start with the offline model and no MCP file, then list ``sys.modules``. Photos,
PDFs, MCP servers, Discord, the dashboard and the model SDKs each load their library when
first used; a top-level import that brings one back to the start fails here by name
(``bench/start.py`` measures what such an import costs).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.child_process import clean_env

ROOT = Path(__file__).resolve().parent.parent
# Measured at start before they were deferred, with what each is for.
HEAVY = {
    "PIL": "photos (bot.media.images)",
    "pypdf": "PDF documents (bot.media.documents)",
    "bot.media.workers": "the first document or photo (bot.media.attachments)",
    "mcp": "MCP servers (bot.tools.mcp_client)",
    "pydantic": "MCP servers, the model SDKs",
    "jwt": "MCP servers",
    "cryptography": "Telegram Passport (python-telegram-bot), MCP servers",
    "discord": "the Discord adapter",
    "aiohttp.web": "the dashboard and the Telegram webhook",
    "openai": "OpenAI models and transcription",
    "anthropic": "Anthropic models",
    "dateparser": "the first reminder phrase (bot.models.reminder_phrases)",
    "icalendar": "the first calendar read (bot.calendar.ics)",
    "recurring_ical_events": "the first calendar read (bot.calendar.ics)",
    "x_wr_timezone": "the first calendar read (bot.calendar.ics)",
    "caldav": "the CalDAV calendar, only when FRONTDESK_CALDAV_URL is set (bot.calendar.caldav)",
    "bot.calendar.caldav": "the CalDAV calendar, only when FRONTDESK_CALDAV_URL is set",
}
# What `frontdesk run` imports for a Telegram start, then the app it assembles.
TEXT_ONLY_START = """
import json, os, sys
import bot.cli.run
import bot.adapters.telegram.start
from bot.app import assemble
from bot.config.settings import Settings

assemble(Settings.from_env(os.environ))
print(json.dumps(sorted(sys.modules)))
"""
# Modules that must stay cheap to import whoever imports them.
CHEAP = ["bot.media.attachments", "bot.media.documents", "bot.media.images",
         "bot.media.transcription", "bot.tools.mcp_client", "bot.tools.mcp_config",
         "bot.models", "bot.models.check", "bot.config.settings", "bot.adapters.telegram.start",
         "memory.notes", "sqlitedb"]


def loaded_modules(script: str, home: Path) -> set[str]:
    """The modules a fresh interpreter holds after running ``script``."""
    env = clean_env(FRONTDESK_HOME=str(home), FRONTDESK_MODEL_PROVIDER="offline",
                    TELEGRAM_BOT_TOKEN="123456:TEST-token", TELEGRAM_OWNER_ID="42",
                    PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", script], env=env, cwd=home,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-3000:]
    return set(json.loads(done.stdout.splitlines()[-1]))


def heavy_in(modules: set[str]) -> dict[str, str]:
    return {name: why for name, why in HEAVY.items() if name in modules}


def test_a_text_only_start_loads_no_heavy_library(tmp_path: Path) -> None:
    assert not (tmp_path / "mcp.json").exists()
    modules = loaded_modules(TEXT_ONLY_START, tmp_path)
    assert "telegram" in modules and "bot.chat.gateway" in modules  # it did build the bot
    assert heavy_in(modules) == {}


@pytest.mark.parametrize("module", CHEAP)
def test_importing_a_module_loads_no_heavy_library(module: str, tmp_path: Path) -> None:
    script = f"import json, sys\nimport {module}\nprint(json.dumps(sorted(sys.modules)))"
    assert heavy_in(loaded_modules(script, tmp_path)) == {}

"""config/.env.example lists every variable the code reads, and stays valid settings:
a newcomer who copies it gets a file every command accepts."""

from __future__ import annotations

import re
from pathlib import Path

from dotenv import dotenv_values

from bot.config.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
VARIABLE = re.compile(r'"((?:FRONTDESK|TELEGRAM|DISCORD|OPENAI|ANTHROPIC)_[A-Z0-9_]+)"')


def test_every_variable_the_code_reads_is_listed() -> None:
    example = (ROOT / "config" / ".env.example").read_text()
    read = {name for folder in ("bot", "graphs", "memory", "sqlitedb")
            for path in (ROOT / folder).rglob("*.py")
            for name in VARIABLE.findall(path.read_text())}
    missing = sorted(name for name in read if not re.search(rf"^#? ?{name}=", example, re.M))
    assert missing == []


def test_the_example_as_it_is_is_valid(tmp_path: Path) -> None:
    values = {k: v or "" for k, v in dotenv_values(ROOT / "config" / ".env.example").items()}
    Settings.from_env({**values, "FRONTDESK_HOME": str(tmp_path)}).check_files()

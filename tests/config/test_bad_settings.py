"""A bad setting stops `frontdesk` with exit status 2 and one line naming the variable, the
value (never a secret's) and what is expected; a bug shows one line and a log file, never a
traceback."""

from __future__ import annotations

import subprocess
import sys
from datetime import time
from pathlib import Path

import pytest

from bot.config.settings import Settings
from tests.support.child_process import clean_env

SECRET = "s3cr3t-value-never-shown"


def frontdesk(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`frontdesk ARGS` in ``tmp_path`` (no .env) with only these Frontdesk variables."""
    clean = clean_env(**{"FRONTDESK_HOME": str(tmp_path / "home"), **env})
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args], cwd=tmp_path, env=clean,
                          capture_output=True, text=True, timeout=60)


BAD = [  # variable, value, words the message must carry
    ("FRONTDESK_TIMEZONE", "Mars/Phobos", "IANA time zone, e.g. Europe/Berlin"),
    ("FRONTDESK_BRIEF_AT", "7am", "HH:MM"),
    ("FRONTDESK_NOTIFY", "sms", "telegram, discord, all"),
    ("FRONTDESK_DAILY_BUDGET_USD", "two", "number"),
    ("FRONTDESK_MODEL_TIMEOUT", "soon", "seconds"),
    ("FRONTDESK_DASHBOARD_PORT", "99999", "65535"),
    ("FRONTDESK_DRAFT_MAX_WORDS", "many", "whole number"),
    ("FRONTDESK_GRAPH_WORKFLOWS", "perhaps", "on or off"),
    ("FRONTDESK_PAIRING", "maybe", "ask, off"),
    ("FRONTDESK_MODEL_PROVIDER", "gemini", "anthropic, openai, offline"),
    ("FRONTDESK_LOG_LEVEL", "loud", "debug"),
    ("TELEGRAM_OWNER_ID", "@ann", "numeric user id"),
    ("TELEGRAM_ALLOWED_USERS", "43,bob", "numeric user id"),
    ("DISCORD_OWNER_ID", "ann#1234", "numeric user id"),
    ("DISCORD_ALLOWED_USERS", "1;2", "numeric user id"),
    ("TELEGRAM_BASE_URL", "127.0.0.1:8081/bot", "http(s) URL"),
    ("OPENAI_BASE_URL", "localhost:11434", "http(s) URL"),
    ("FRONTDESK_TELEGRAM_WEBHOOK_LISTEN", "8443", "host:port"),
    ("FRONTDESK_DISCORD_READY_TIMEOUT", "fast", "seconds"),
]


@pytest.mark.parametrize(("name", "value", "expected"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_value_names_the_variable_the_value_and_what_is_expected(
        tmp_path: Path, name: str, value: str, expected: str) -> None:
    done = frontdesk(tmp_path, "people", **{name: value})
    assert done.returncode == 2, done.stderr
    [line] = done.stderr.splitlines()  # one line, no traceback
    assert name in line and repr(value) in line and expected in line, line
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize(("name", "value"), [
    ("TELEGRAM_BOT_TOKEN", SECRET), ("TELEGRAM_BOT_TOKEN", f"12345 {SECRET}"),
    ("DISCORD_BOT_TOKEN", f"Bot {SECRET}")])
def test_a_bad_token_is_named_but_never_shown(tmp_path: Path, name: str, value: str) -> None:
    done = frontdesk(tmp_path, "people", **{name: value})
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert name in line and "bot token" in line and "value not shown" in line
    assert SECRET not in done.stderr and "Traceback" not in done.stderr


def test_a_short_test_server_token_is_accepted() -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": "/tmp/x", "TELEGRAM_BOT_TOKEN": "1:a"})
    assert settings.telegram_bot_token == "1:a"


def test_an_unwritable_home_is_named(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    done = frontdesk(tmp_path, "people", FRONTDESK_HOME=str(blocker / "home"))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "FRONTDESK_HOME" in line and "not a writable directory" in line
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("kind", ["missing", "folder"])
def test_an_unreadable_calendar_is_named(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "cal.ics"
    if kind == "folder":
        path.mkdir()
    done = frontdesk(tmp_path, "people", FRONTDESK_CALENDAR=str(path))
    assert done.returncode == 2
    [line] = done.stderr.splitlines()
    assert "FRONTDESK_CALENDAR" in line and "cannot be read" in line and ".ics" in line
    assert "Traceback" not in done.stderr


def test_a_calendar_url_is_not_read_at_start() -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": "/tmp/x",
                                  "FRONTDESK_CALENDAR": "https://example.invalid/cal.ics"})
    settings.check_files()  # nothing raised: a URL is fetched (and cached) when used


def test_good_values_are_parsed() -> None:
    settings = Settings.from_env({
        "FRONTDESK_HOME": "/tmp/x", "FRONTDESK_TIMEZONE": "Europe/Berlin",
        "FRONTDESK_BRIEF_AT": "07:30", "FRONTDESK_NOTIFY": "All", "FRONTDESK_PAIRING": "ask",
        "FRONTDESK_GRAPH_WORKFLOWS": "off", "FRONTDESK_DAILY_BUDGET_USD": "2.5",
        "FRONTDESK_DASHBOARD_PORT": "8765", "TELEGRAM_ALLOWED_USERS": " 43, 44 ,",
        "DISCORD_OWNER_ID": "123456789012345678", "FRONTDESK_LOG_LEVEL": "info"})
    assert (settings.timezone, settings.brief_at, settings.notify) == (
        "Europe/Berlin", time(7, 30), "all")
    assert settings.pairing == "ask" and settings.graph_workflows is False
    assert settings.daily_budget_usd == 2.5 and settings.dashboard_port == 8765
    assert settings.telegram_allowed_users == {"43", "44"}
    assert settings.log_level == "INFO"


def test_version(tmp_path: Path) -> None:
    done = frontdesk(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.startswith("frontdesk 0.")


def test_a_bug_is_one_line_and_a_log_file_never_a_traceback(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "frontdesk.db").write_bytes(b"this is not a database" * 100)
    done = frontdesk(tmp_path, "runs", TELEGRAM_BOT_TOKEN=f"1:{SECRET}")
    assert done.returncode == 1
    [line] = done.stderr.splitlines()
    assert "Traceback" not in done.stderr and "unexpected error" in line
    log = home / "logs" / "frontdesk.log"
    assert str(log) in line
    assert "Traceback" in log.read_text() and SECRET not in log.read_text()

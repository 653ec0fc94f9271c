"""`frontdesk doctor [--json]` against the loopback fakes: one line per check, ok or
the problem and its fix; exit 0 when all are ok, 1 otherwise."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.anthropic_server import FakeAnthropicServer
from tests.fakes.discord_server import OWNER_ID, FakeDiscord
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.child_process import clean_env
from tests.support.harness import event_around_now

OWNER = 42
KEY = "sk-doctor-test-key-0001"


def doctor(tmp_path: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    clean = clean_env(**{"FRONTDESK_HOME": str(tmp_path / "home"), **env})
    return subprocess.run([sys.executable, "-m", "bot.cli.main", "doctor", *extra], cwd=tmp_path,
                          env=clean, capture_output=True, text=True, timeout=60)


def checks(done: subprocess.CompletedProcess[str]) -> list[dict[str, Any]]:
    report = json.loads(done.stdout)
    assert report["ok"] == (done.returncode == 0)
    found: list[dict[str, Any]] = report["checks"]
    assert all(set(c) == {"name", "ok", "detail", "fix"} for c in found)
    return found


def failed(done: subprocess.CompletedProcess[str]) -> list[str]:
    """``name: detail Fix: fix`` of every failed check."""
    return [f"{c['name']}: {c['detail']} Fix: {c['fix']}" for c in checks(done) if not c["ok"]]


@pytest.fixture(scope="module")
def telegram() -> Iterator[FakeTelegramServer]:
    with FakeTelegramServer() as server:
        server.add_chat(OWNER)
        yield server


@pytest.fixture(scope="module")
def discord_fake() -> Iterator[FakeDiscord]:
    with FakeDiscord().in_thread() as server:
        yield server


@pytest.fixture(scope="module")
def openai_fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(api_key=KEY, models=["gpt-4.1-mini", "gpt-4.1"]) as server:
        yield server


@pytest.fixture
def healthy(tmp_path: Path, telegram: FakeTelegramServer, discord_fake: FakeDiscord,
            openai_fake: FakeOpenAIServer) -> dict[str, str]:
    calendar = event_around_now(tmp_path / "cal.ics", "Dentist")
    return {"TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_BASE_URL": telegram.base_url,
            "TELEGRAM_OWNER_ID": str(OWNER), "DISCORD_BOT_TOKEN": discord_fake.token,
            "DISCORD_BASE_URL": discord_fake.base_url, "DISCORD_OWNER_ID": str(OWNER_ID),
            "OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": openai_fake.base_url,
            "FRONTDESK_CALENDAR": str(calendar), "FRONTDESK_TIMEZONE": "UTC"}


def test_all_ok_exits_0_with_one_line_per_check(tmp_path: Path, healthy: dict[str, str]) -> None:
    done = doctor(tmp_path, healthy)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    assert lines[-1] == "All checks passed."
    names = [line.split()[1] for line in lines[:-1]]
    assert names[:3] == ["settings", "data", "database"]
    assert {"telegram", "discord", "models", "calendar"} <= set(names)
    assert all(line.startswith("ok") for line in lines[:-1])
    assert "@frontdesk_test_bot" in done.stdout and "privacy mode on" in done.stdout
    assert "1 events in the next 7 days" in done.stdout
    assert KEY not in done.stdout and "Traceback" not in done.stderr


def test_json_names_every_problem_with_its_fix(
        tmp_path: Path, healthy: dict[str, str], telegram: FakeTelegramServer) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "frontdesk.db").write_bytes(b"garbage" * 200)
    env = {**healthy, "TELEGRAM_OWNER_ID": "4242", "OPENAI_API_KEY": "sk-wrong",
           "DISCORD_OWNER_ID": "123"}
    done = doctor(tmp_path, env, "--json")
    assert done.returncode == 1
    problems = failed(done)
    assert any(p.startswith("database:") and "cannot be read" in p for p in problems)
    assert any("owner 4242 has no chat" in p and "press Start" in p for p in problems)
    assert any("owner 123 is not a Discord user" in p for p in problems)
    assert any("refused OPENAI_API_KEY" in p for p in problems)
    assert "sk-wrong" not in done.stdout


def test_a_bad_token_a_missing_intent_and_a_missing_model(tmp_path: Path,
                                                          healthy: dict[str, str]) -> None:
    with FakeDiscord(message_content_enabled=False).in_thread() as no_intent:
        env = {**healthy, "TELEGRAM_BOT_TOKEN": "999:not-the-token",
               "DISCORD_BOT_TOKEN": no_intent.token, "DISCORD_BASE_URL": no_intent.base_url,
               "FRONTDESK_BIG_MODEL": "gpt-9"}
        problems = failed(doctor(tmp_path, env, "--json"))
    assert any("Telegram refused TELEGRAM_BOT_TOKEN" in p and "@BotFather" in p
               for p in problems)
    assert any("Message Content Intent is off" in p for p in problems)
    assert any("does not offer gpt-9" in p and "gpt-4.1-mini" in p for p in problems)


def test_bad_settings_are_a_finding_and_the_rest_is_skipped(tmp_path: Path) -> None:
    done = doctor(tmp_path, {"FRONTDESK_NOTIFY": "sms"})
    assert done.returncode == 1 and "Traceback" not in done.stderr
    first, *rest = done.stdout.splitlines()
    assert first.startswith("FAIL") and "FRONTDESK_NOTIFY='sms'" in first
    assert any("skipped" in line for line in rest)


def test_anthropic_key_and_models(tmp_path: Path) -> None:
    with FakeAnthropicServer(api_key=KEY) as anthropic:
        env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": anthropic.base_url}
        good = checks(doctor(tmp_path, env, "--json"))
        bad = failed(doctor(tmp_path, {**env, "ANTHROPIC_API_KEY": "sk-ant-wrong"}, "--json"))
    [models] = [c for c in good if c["name"] == "models"]
    assert models["ok"] and "claude-haiku-4-5" in models["detail"]
    assert any("Anthropic refused ANTHROPIC_API_KEY" in p for p in bad)


def test_transcription_and_mcp_servers_when_configured(tmp_path: Path,
                                                       healthy: dict[str, str]) -> None:
    from tests.tools.conftest import time_server

    servers = {"mcpServers": {"time": time_server(),
                              "broken": {"command": str(tmp_path / "no-such-server")}}}
    (tmp_path / "mcp.json").write_text(json.dumps(servers))
    done = doctor(tmp_path, {**healthy, "FRONTDESK_MCP_CONFIG": str(tmp_path / "mcp.json")},
                  "--json")
    assert done.returncode == 1
    found = {c["name"]: c for c in checks(done)}
    assert found["transcribe"]["ok"], found["transcribe"]
    assert found["mcp time"]["ok"] and "time__get_current_time" in found["mcp time"]["detail"]
    assert not found["mcp broken"]["ok"] and "mcp-broken.log" in found["mcp broken"]["fix"]
    assert "Traceback" not in done.stderr


def test_no_transcription_or_mcp_lines_when_not_configured(tmp_path: Path) -> None:
    done = doctor(tmp_path, {"FRONTDESK_TIMEZONE": "UTC"}, "--json")
    names = {c["name"] for c in checks(done)}
    assert "transcribe" not in names and not any(n.startswith("mcp") for n in names)

"""`frontdesk setup` on a pseudo-terminal against the fakes: tokens checked with the
platform at once, the owner's id read from their first message, a model key checked with one
call, bad answers asked again, `.env` written 0600 with other values kept, no secret echoed."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

from dotenv import dotenv_values

from tests.fakes.discord_server import OWNER_ID, FakeDiscord
from tests.fakes.openai_server import FakeOpenAIServer
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.child_process import clean_env as without_foreign
from tests.support.harness import event_around_now
from tests.support.terminal import Terminal

KEY = "sk-setup-test-key-000123"


def clean_env(**extra: str) -> dict[str, str]:
    return without_foreign(**{"TERM": "dumb", **extra})


def answer_the_rest(term: Terminal) -> None:
    """The wizard's last steps with their defaults (time zone UTC); it must exit 0."""
    term.expect("Model provider?")
    term.send("")
    term.expect("Your time zone")
    term.send("UTC")
    term.expect("Calendar:")
    term.send("")
    term.expect("Let strangers ask")
    term.send("")
    assert term.wait() == 0


def test_telegram_and_a_model_key_into_a_kept_env_file(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("# mine\nFRONTDESK_DAILY_BUDGET_USD=2\nTELEGRAM_OWNER_ID=1\n")
    calendar = event_around_now(tmp_path / "cal.ics", "Dentist")
    with FakeTelegramServer() as telegram, \
            FakeOpenAIServer(api_key=KEY, models=["gpt-4.1-mini", "gpt-4.1"]) as openai:
        env = clean_env(TELEGRAM_BASE_URL=telegram.base_url, OPENAI_BASE_URL=openai.base_url,
                        FRONTDESK_HOME=str(tmp_path / "home"))
        with Terminal(["setup"], cwd=tmp_path, env=env) as term:
            term.expect("Which chat platform?")
            term.send("t")
            term.expect("Paste the Telegram bot token")
            term.send("not a token")
            term.expect("is not a bot token: expected <digits>:<text>")
            term.expect("Paste the Telegram bot token")  # getpass drops what is typed ahead
            term.send("999:not-the-token")
            term.expect("Telegram refused that token")
            term.expect("Paste the Telegram bot token")
            term.send(telegram.token)
            term.expect("Signed in as @frontdesk_test_bot")
            term.expect("Now send any message to @frontdesk_test_bot")
            telegram.push_message(42, 42, "hi there")
            term.expect("Got it: User 42, id 42")
            term.expect("Answer mail too")
            term.send("")
            term.expect("Model provider?")
            term.send("p")
            term.expect("Paste the OPENAI API key")
            term.send("sk-wrong")
            term.expect("refused OPENAI_API_KEY")
            term.expect("Paste the OPENAI API key")
            term.send(KEY)
            term.expect("Key accepted: 2 models offered")
            term.expect("Your time zone")
            term.send("Mars/Phobos")
            term.expect("is not an IANA time zone")
            term.expect("Your time zone")
            term.send("Europe/Berlin")
            term.expect("Calendar:")
            term.send(str(tmp_path / "missing.ics"))
            term.expect("cannot be read")
            term.expect("Calendar:")
            term.send(str(calendar))
            term.expect("Let strangers ask")
            term.send("y")
            term.expect("Next: `frontdesk doctor`")
            assert term.wait() == 0
        assert telegram.pending_updates() == []  # the set-up message is not answered later
    assert telegram.token not in term.transcript and KEY not in term.transcript  # no echo
    written = tmp_path / ".env"
    assert stat.S_IMODE(written.stat().st_mode) == 0o600
    assert written.read_text().startswith("# mine\n")
    got = dotenv_values(written)
    assert got["FRONTDESK_DAILY_BUDGET_USD"] == "2"  # kept
    assert got["TELEGRAM_OWNER_ID"] == "42"  # replaced
    assert got["TELEGRAM_BOT_TOKEN"] == telegram.token and got["OPENAI_API_KEY"] == KEY
    assert got["FRONTDESK_TIMEZONE"] == "Europe/Berlin"
    assert got["FRONTDESK_CALENDAR"] == str(calendar)
    assert got["FRONTDESK_PAIRING"] == "ask" and got["FRONTDESK_MODEL_PROVIDER"] == "openai"


def test_discord_reads_the_owner_from_the_first_dm(tmp_path: Path) -> None:
    with FakeDiscord().in_thread() as fake:
        env = clean_env(DISCORD_BASE_URL=fake.base_url, FRONTDESK_HOME=str(tmp_path / "home"),
                        FRONTDESK_DISCORD_READY_TIMEOUT="0.05")
        with Terminal(["setup"], cwd=tmp_path, env=env) as term:
            term.expect("Which chat platform?")
            term.send("d")
            term.expect("Paste the Discord bot token")
            term.send("Bot " + fake.token)
            term.expect("paste the token alone")
            term.expect("Paste the Discord bot token")
            term.send(fake.token)
            term.expect("Signed in as frontdesk")
            term.expect("direct message")
            fake.wait_for_blocking(lambda: fake.identifies, timeout=20, what="IDENTIFY")
            fake.push_message("hello bot")
            term.expect(f"id {OWNER_ID}. You are the owner.")
            term.expect("Answer mail too")
            term.send("")
            answer_the_rest(term)
    got = dotenv_values(tmp_path / ".env")
    assert got["DISCORD_OWNER_ID"] == str(OWNER_ID) and got["DISCORD_BOT_TOKEN"] == fake.token
    assert got["FRONTDESK_MODEL_PROVIDER"] == "offline" and "FRONTDESK_PAIRING" not in got
    assert fake.token not in term.transcript


def test_without_a_terminal_it_refuses(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "bot.cli.main", "setup"], cwd=tmp_path,
                          env=clean_env(), stdin=subprocess.DEVNULL, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2 and "needs a terminal" in done.stderr
    assert not (tmp_path / ".env").exists()


def test_ctrl_c_stops_without_writing(tmp_path: Path) -> None:
    with Terminal(["setup"], cwd=tmp_path, env=clean_env(FRONTDESK_HOME=str(tmp_path))) as term:
        term.expect("Which chat platform?")
        assert term.interrupt() == 130
    assert "nothing was written" in term.transcript and "Traceback" not in term.transcript
    assert not (tmp_path / ".env").exists()

"""`frontdesk run` as a real subprocess against the fake Telegram Bot API (run in a thread).

Usage::

    with FakeTelegramServer() as telegram:
        bot = FrontdeskProcess(telegram, tmp_path)
        bot.start()                                   # returns once the bot polls
        telegram.push_message(OWNER, OWNER, "hi")
        [reply] = bot.replies(OWNER, 1)
        bot.kill()                                    # SIGKILL: no clean-up at all
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from tests.fakes.telegram_server import FakeTelegramServer, SentMessage

T = TypeVar("T")
OWNER = 42
ALLOWED = (43, 44)
STRANGER = 66
# Variables of the developer's own set-up that must not leak into the bot under test.
# settings of the machine the tests run on, which no test process may inherit
FOREIGN = ("FRONTDESK_", "TELEGRAM_", "DISCORD_", "OPENAI_", "ANTHROPIC_")


class FrontdeskProcess:
    """One `frontdesk run` subprocess at a time, over one FRONTDESK_HOME, restartable."""

    def __init__(self, telegram: FakeTelegramServer, home: Path, *,
                 allowed: Iterable[int] = ALLOWED, env: Mapping[str, str] | None = None) -> None:
        self.telegram = telegram
        self.home = home
        self.log_path = home / "bot.log"
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(FOREIGN)}
        self.env.update({
            "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_BASE_URL": telegram.base_url,
            "TELEGRAM_OWNER_ID": str(OWNER),
            "TELEGRAM_ALLOWED_USERS": ",".join(str(u) for u in allowed),
            "FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "offline",
            "FRONTDESK_LOG_LEVEL": "INFO", "PYTHONUNBUFFERED": "1",
            "FRONTDESK_MERGE_WINDOW": "0"})  # one reply per message, unless a test merges
        self.env.update(env or {})
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, ready: Callable[[], object] | None = None, timeout: float = 30.0) -> None:
        """Start the bot; return once ``ready()`` holds (default: it has asked for updates)."""
        polls = self.telegram.polls
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli.main", "run"],
                                         env=self.env, cwd=self.home, stdout=log, stderr=log)
        self.wait(ready or (lambda: self.telegram.polls > polls), timeout)

    def wait(self, predicate: Callable[[], T | None], timeout: float = 20.0) -> T:
        """Wait for a condition on the fake; fail at once, with the log, if the bot died."""
        def met_or_dead() -> T | bool | None:
            value = predicate()
            return value or (self.proc is not None and self.proc.poll() is not None)

        try:
            self.telegram.wait_for_sync(met_or_dead, timeout)
        except TimeoutError as error:
            raise AssertionError(f"timed out; bot log:\n{self.log()[-3000:]}") from error
        value = predicate()
        if not value:
            raise AssertionError(f"the bot exited; log:\n{self.log()[-3000:]}")
        return value

    def poll(self, predicate: Callable[[], T], timeout: float = 20.0) -> T:
        """Poll a condition the fake is not told about (the bot's database) until a deadline."""
        deadline = time.monotonic() + timeout
        while not (value := predicate()):
            if self.proc is None or self.proc.poll() is not None:
                raise AssertionError(f"the bot exited; log:\n{self.log()[-3000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out; bot log:\n{self.log()[-3000:]}")
            time.sleep(0.05)
        return value

    def replies(self, chat_id: int, count: int, timeout: float = 20.0) -> list[SentMessage]:
        """The bot's messages in a chat, once there are at least ``count``."""
        def enough() -> list[SentMessage] | None:
            sent = self.telegram.messages_to(chat_id)
            return sent if len(sent) >= count else None

        return self.wait(enough, timeout)

    def kill(self) -> None:
        """SIGKILL: whatever the bot had in memory is gone."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def stop(self) -> None:
        """A polite stop (SIGTERM), as a service manager does."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)
        self.proc = None

    def log(self) -> str:
        """Everything the bot wrote to stdout and stderr so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

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

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TypeVar

from tests.fakes.telegram_server import FakeTelegramServer, SentMessage
from tests.support.child_process import RunProcess, terminate

T = TypeVar("T")
OWNER = 42
ALLOWED = (43, 44)
STRANGER = 66


class FrontdeskProcess(RunProcess):
    """One `frontdesk run` subprocess at a time, over one FRONTDESK_HOME, restartable."""

    def __init__(self, telegram: FakeTelegramServer, home: Path, *,
                 allowed: Iterable[int] = ALLOWED, env: Mapping[str, str] | None = None) -> None:
        super().__init__(home, {
            "TELEGRAM_BOT_TOKEN": telegram.token, "TELEGRAM_BASE_URL": telegram.base_url,
            "TELEGRAM_OWNER_ID": str(OWNER),
            "TELEGRAM_ALLOWED_USERS": ",".join(str(u) for u in allowed), **(env or {})})
        self.telegram = telegram

    def start(self, ready: Callable[[], object] | None = None, timeout: float = 30.0) -> None:
        """Start the bot; return once ``ready()`` holds (default: it has asked for updates)."""
        polls = self.telegram.polls
        self.launch()
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

    def replies(self, chat_id: int, count: int, timeout: float = 20.0) -> list[SentMessage]:
        """The bot's messages in a chat, once there are at least ``count``."""
        def enough() -> list[SentMessage] | None:
            sent = self.telegram.messages_to(chat_id)
            return sent if len(sent) >= count else None

        return self.wait(enough, timeout)

    def stop(self) -> None:
        """A polite stop (SIGTERM), as a service manager does."""
        if self.proc is not None and self.proc.poll() is None:
            terminate(self.proc)
        self.proc = None

"""The chaos bench's world: chats on the fake Telegram and Discord, and the bot it kills.

``ChaosWorld`` starts both loopback fakes (``tests/fakes``) in threads of their own, makes
the people who write (Telegram users and Discord users, each in a private chat with the
bot), and runs ``frontdesk run`` over one ``FRONTDESK_HOME`` with both tokens set, the
offline model, and every sender on the platform's allowlist. ``BotProcess.kill()`` is a
SIGKILL; ``start()`` does not wait, so the bench can kill a bot that is still starting.

Usage::

    with ChaosWorld(home, telegram_chats=2, discord_chats=2) as world:
        world.bot.start()
        world.chats[0].send("hello")
        world.chats[0].replies()          # the bot's messages in that chat, oldest first
        world.bot.kill()
"""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from tests.fakes.discord_server import OWNER_ID as DISCORD_OWNER
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.child_process import clean_env

REPO = Path(__file__).resolve().parent.parent
TELEGRAM_OWNER = 42  # the owners write nothing: every sender is an allowed person
TELEGRAM_FIRST_USER = 7001


class Chat(Protocol):
    """One person's private chat with the bot, on either platform."""

    platform: str

    @property
    def name(self) -> str:
        """Platform and person, e.g. ``telegram:7001``."""

    def send(self, text: str) -> None:
        """The person writes ``text`` to the bot."""

    def replies(self) -> list[str]:
        """Every message the bot sent in this chat, oldest first, as the person sees it."""


@dataclass
class TelegramChat:
    """A private Telegram chat: chat id and user id are the same number."""

    server: FakeTelegramServer
    user_id: int
    platform: str = "telegram"

    @property
    def name(self) -> str:
        return f"telegram:{self.user_id}"

    def send(self, text: str) -> None:
        self.server.push_message(self.user_id, self.user_id, text)

    def replies(self) -> list[str]:
        return [message.text for message in self.server.messages_to(self.user_id)]


@dataclass
class DiscordChat:
    """A Discord DM; the fake keeps it in the channel history first, so a message sent
    while the bot is down is there for its catch-up."""

    fake: FakeDiscord
    user: dict[str, Any]
    platform: str = "discord"

    @property
    def name(self) -> str:
        return f"discord:{self.user['username']}"

    def send(self, text: str) -> None:
        self.fake.push_message(text, author=self.user)

    def replies(self) -> list[str]:
        channel = self.fake.dm_channel_id(int(self.user["id"]))
        return [str(message.get("content") or "") for message in self.fake.sent_to(channel)]


class BotProcess:
    """``frontdesk run`` as a subprocess, one at a time over the same home."""

    def __init__(self, env: dict[str, str], home: Path) -> None:
        self.env = env
        self.home = home
        self.log_path = home / "bot.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def command(self) -> list[str]:
        """The console script when the virtualenv has it, else the module."""
        script = Path(sys.executable).with_name("frontdesk")
        return [str(script), "run"] if script.exists() else [sys.executable, "-m", "bot.cli.main",
                                                              "run"]

    def start(self) -> None:
        """Start the bot and return at once (it recovers and connects on its own)."""
        assert not self.alive(), "the bot is already running"
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen(self.command(), env=self.env, cwd=self.home,
                                         stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT)
        self.starts += 1

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def kill(self) -> None:
        """SIGKILL: whatever the bot had in memory is gone, nothing is cleaned up."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM as a service manager sends it; SIGKILL if it has not ended in 10 s."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            with suppress(subprocess.TimeoutExpired):
                self.proc.wait(10)
        self.kill()

    def log_tail(self, chars: int = 3000) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return text[-chars:]


class ChaosWorld:
    """Both fakes, the chats and the bot process; a context manager that cleans up all."""

    def __init__(self, home: Path, *, telegram_chats: int, discord_chats: int) -> None:
        self.home = home
        self.telegram = FakeTelegramServer()
        self.discord = FakeDiscord()
        self.telegram_chats = telegram_chats
        self.discord_chats = discord_chats
        self.chats: list[Chat] = []
        self.bot: BotProcess | None = None
        self._stack = ExitStack()

    def __enter__(self) -> ChaosWorld:
        try:
            self._stack.enter_context(self.telegram)
            self._stack.enter_context(self.discord.in_thread())
            self._make_chats()
            self.bot = BotProcess(self.env(), self.home)
            self._stack.callback(self.bot.kill)  # runs first: no bot outlives the fakes
        except BaseException:
            self._stack.close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._stack.close()

    def _make_chats(self) -> None:
        for i in range(self.telegram_chats):
            self.chats.append(TelegramChat(self.telegram, TELEGRAM_FIRST_USER + i))
        for i in range(self.discord_chats):
            user = self.discord.add_user(f"person{i:02d}")
            self.discord.dm_channel_id(int(user["id"]))
            self.chats.append(DiscordChat(self.discord, user))

    def env(self) -> dict[str, str]:
        """The bot's environment: both platforms on loopback, offline model, one home."""
        telegram_ids = [str(c.user_id) for c in self.chats if isinstance(c, TelegramChat)]
        discord_ids = [str(c.user["id"]) for c in self.chats if isinstance(c, DiscordChat)]
        env = clean_env()  # none of the developer's own set-up leaks into the bot under test
        env.update({
            "TELEGRAM_BOT_TOKEN": self.telegram.token,
            "TELEGRAM_BASE_URL": self.telegram.base_url,
            "TELEGRAM_OWNER_ID": str(TELEGRAM_OWNER),
            "TELEGRAM_ALLOWED_USERS": ",".join(telegram_ids),
            "DISCORD_BOT_TOKEN": self.discord.token,
            "DISCORD_BASE_URL": self.discord.base_url,
            "DISCORD_OWNER_ID": str(DISCORD_OWNER),
            "DISCORD_ALLOWED_USERS": ",".join(discord_ids),
            "FRONTDESK_DISCORD_READY_TIMEOUT": "0.05",
            "FRONTDESK_DISCORD_IDENTIFY_DELAY": "0",
            "FRONTDESK_HOME": str(self.home),
            "FRONTDESK_MODEL_PROVIDER": "offline",
            "FRONTDESK_LOG_LEVEL": "INFO",
            "FRONTDESK_MERGE_WINDOW": "0",  # the chaos counts one answer per message
            "FRONTDESK_GUEST_MESSAGES_PER_HOUR": "0",  # many messages per guest, all answered
            "PYTHONPATH": str(REPO),
            "PYTHONUNBUFFERED": "1",
        })
        return env


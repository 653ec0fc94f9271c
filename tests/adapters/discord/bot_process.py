"""Run the real ``frontdesk run`` as a subprocess against a fake Discord in a thread.

``FrontdeskProcess(fake, home).start()`` starts ``python -m bot.cli.main run`` with the Discord
variables pointing at the fake, the offline model and its own ``FRONTDESK_HOME``; ``kill()``
sends SIGKILL (a crash), ``stop()`` SIGINT (a clean stop). discord.py's waits are shortened
through ``FRONTDESK_DISCORD_*`` so a start takes well under a second of waiting.
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.fakes.discord_server import OWNER_ID, FakeDiscord
from tests.support.child_process import clean_env
from tests.support.polling import wait_until

REPO = Path(__file__).resolve().parents[3]


class FrontdeskProcess:
    """One ``frontdesk run`` process at a time over the same home (restarts keep the data)."""

    def __init__(self, fake: FakeDiscord, home: Path, *, allowed: tuple[int, ...] = (),
                 owner: int | None = OWNER_ID, extra_env: dict[str, str] | None = None) -> None:
        self.extra_env = extra_env or {}
        self.fake = fake
        self.home = home
        self.allowed = allowed
        self.owner = owner
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def env(self) -> dict[str, str]:
        env = clean_env(**{
            "DISCORD_BOT_TOKEN": self.fake.token,
            "DISCORD_BASE_URL": self.fake.base_url,
            "DISCORD_ALLOWED_USERS": ",".join(str(user) for user in self.allowed),
            "FRONTDESK_HOME": str(self.home),
            "FRONTDESK_MODEL_PROVIDER": "offline",
            "FRONTDESK_DISCORD_READY_TIMEOUT": "0.05",
            "FRONTDESK_DISCORD_IDENTIFY_DELAY": "0",
            "FRONTDESK_LOG_LEVEL": "INFO",
            "FRONTDESK_MERGE_WINDOW": "0",  # one reply per message, unless a test merges
            "PYTHONPATH": str(REPO),
            "PYTHONFAULTHANDLER": "1",  # SIGABRT on a hung bot prints every thread's stack
        })
        if self.owner is not None:
            env["DISCORD_OWNER_ID"] = str(self.owner)
        env.update(self.extra_env)
        return env

    def start(self, *, wait_connected: bool = True) -> FrontdeskProcess:
        """Start and (by default) wait until the bot has opened its gateway session."""
        assert self.process is None or self.process.poll() is not None, "already running"
        self.starts += 1
        identified = len(self.fake.identifies)
        log = open(self.log_path, "ab")  # noqa: SIM115 - the child keeps it open
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bot.cli.main", "run"], cwd=self.home, env=self.env(),
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        if wait_connected:
            self.fake.wait_for_blocking(
                lambda: len(self.fake.identifies) > identified or self.process_ended(),
                timeout=30, what="the bot's IDENTIFY")
            assert not self.process_ended(), f"frontdesk run ended early:\n{self.output()}"
        return self

    @property
    def log_path(self) -> Path:
        return self.home / "run.log"

    def output(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def process_ended(self) -> bool:
        return self.process is not None and self.process.poll() is not None

    def wait(self, timeout: float = 30) -> int:
        assert self.process is not None
        return self.process.wait(timeout)

    def kill(self) -> None:
        """SIGKILL: no clean-up of any kind, like a crash or a power cut."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        """SIGINT, as Ctrl-C; SIGKILL if it does not stop in time."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.kill()

    def unsent_parts(self) -> int:
        """Outbox parts the bot has not yet recorded as accepted by Discord."""
        with sqlite3.connect(self.home / "frontdesk.db", timeout=10) as conn:
            row = conn.execute("SELECT count(*) FROM outbox WHERE sent_at IS NULL").fetchone()
        return int(row[0])

    def wait_all_sent(self, timeout: float = 10) -> None:
        """Poll (with a deadline) until every outbox part is recorded as sent.

        A part Discord accepted is only marked a moment later; a SIGKILL in between sends it
        again at restart (at-least-once), so a crash test waits for the mark first.
        """
        wait_until(lambda: not self.unsent_parts(), timeout, what="every outbox part sent")

    def __enter__(self) -> FrontdeskProcess:
        return self

    def __exit__(self, *exc: Any) -> None:
        if exc[0] is not None and self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGABRT)  # a failed test: show where it was
            self.process.wait(10)
        self.kill()

"""`frontdesk run` as a child process of a test: started over its own home with a cleaned
environment, its output in ``home/bot.log``, polled with a deadline (failing at once, with the
log, if it died), killed or stopped."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

from tests.support.polling import wait_until

T = TypeVar("T")
# settings of the machine the tests run on, which no test process may inherit
FOREIGN = ("FRONTDESK_", "TELEGRAM_", "DISCORD_", "OPENAI_", "ANTHROPIC_")


def clean_env(*more_prefixes: str, **extra: str) -> dict[str, str]:
    """This process's environment without the FOREIGN settings (nor any whose name starts
    with one of ``more_prefixes``, e.g. "TZ" or "XDG_"), plus ``extra``."""
    dropped = FOREIGN + more_prefixes
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update(extra)
    return env


def terminate(proc: subprocess.Popen[bytes], timeout: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process is still running ``timeout`` seconds later."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


class RunProcess:
    """One `frontdesk run` at a time over one home (the offline model), restartable,
    killable; ``env`` adds to (or overrides) the settings every such test shares."""

    def __init__(self, home: Path, env: Mapping[str, str]) -> None:
        self.home = home
        self.log_path = home / "bot.log"
        self.env = clean_env(**{
            "FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "offline",
            "FRONTDESK_LOG_LEVEL": "INFO", "PYTHONUNBUFFERED": "1",
            "FRONTDESK_MERGE_WINDOW": "0",  # one reply per message, unless a test merges
            **env})
        self.proc: subprocess.Popen[bytes] | None = None

    def launch(self) -> None:
        """Start `frontdesk run`, appending its output to the log; return at once."""
        self.home.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "bot.cli.main", "run"],
                                         env=self.env, cwd=self.home, stdout=log, stderr=log,
                                         stdin=subprocess.DEVNULL)

    def poll(self, predicate: Callable[[], T], timeout: float = 20.0) -> T:
        """Poll a condition until a deadline; fail at once, with the log, if the bot died."""
        def alive_and() -> T:
            if self.proc is None or self.proc.poll() is not None:
                raise AssertionError(f"the bot exited; log:\n{self.log()[-3000:]}")
            return predicate()

        try:
            return wait_until(alive_and, timeout)
        except TimeoutError:
            raise AssertionError(f"timed out; bot log:\n{self.log()[-3000:]}") from None

    def kill(self) -> None:
        """SIGKILL: whatever the bot had in memory is gone."""
        if self.proc is not None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)
            self.proc = None

    def log(self) -> str:
        """Everything the bot wrote to stdout and stderr so far."""
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

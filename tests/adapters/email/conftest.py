"""The email tests' servers (a real Dovecot, aiosmtpd), and `frontdesk run` and `frontdesk
doctor` as subprocesses."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest

from bot.service.unit import TIMEOUT_STOP_S
from tests.support.child_process import RunProcess, clean_env
from tests.support.mail_servers import Dovecot, Smtp, dovecot_missing, email_env

# SIGTERM to exit: systemd's TimeoutStopSec, which holds the sends' grace and the closing; a
# stop that needs more was stuck (it is then killed, and the test fails)
STOP_WAIT_S = TIMEOUT_STOP_S
STOPPED = "Stopped:"  # the banner's last line (bot.cli.run)


@pytest.fixture
def dovecot(tmp_path: Path) -> Iterator[Dovecot]:
    if (reason := dovecot_missing()) is not None:
        pytest.skip(reason)
    with Dovecot(tmp_path / "dovecot") as server:
        yield server


@pytest.fixture
def smtp() -> Iterator[Smtp]:
    with Smtp() as server:
        yield server


class DeskProcess(RunProcess):
    """`frontdesk run` with email only (the offline model), restartable, killable."""

    def __init__(self, home: Path, env: Mapping[str, str]) -> None:
        super().__init__(home, {
            "FRONTDESK_STREAM": "0", "FRONTDESK_GUEST_MESSAGES_PER_HOUR": "0",
            "FRONTDESK_WRITES_PER_SECOND": "1000", **env})

    def start(self) -> None:
        """Start; return once the banner's email line is out (the mailbox is open)."""
        mark = self.log().count("Email:")
        self.launch()
        self.poll(lambda: self.log().count("Email:") > mark, 30)

    def stop(self) -> None:
        """SIGTERM, as systemd stops it: the bot must exit on its own (never killed), 0, with
        its stop line; an idle mailbox must not hold it up."""
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        stopped = self.log().count(STOPPED)
        proc.terminate()
        try:
            code = proc.wait(STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
            raise AssertionError(f"`frontdesk run` was still running {STOP_WAIT_S} s after "
                                 f"SIGTERM (killed); log:\n{self.log()[-3000:]}") from None
        assert code == 0, f"`frontdesk run` exited {code} on SIGTERM; log:\n{self.log()[-3000:]}"
        assert self.log().count(STOPPED) > stopped, f"no stop line; log:\n{self.log()[-3000:]}"


def doctor(home: Path, env: Mapping[str, str]) -> tuple[int, str]:
    """`frontdesk doctor` over ``home`` with ``env``: its exit status and all it printed."""
    done = subprocess.run([sys.executable, "-m", "bot.cli.main", "doctor"],
                          env=clean_env(**{"FRONTDESK_HOME": str(home), **env}),
                          capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout + done.stderr


def email_lines(out: str) -> list[str]:
    """The doctor's two email lines (IMAP, then SMTP)."""
    return [line for line in out.splitlines() if line[6:].startswith("email")]


@pytest.fixture
def desk_process(tmp_path: Path, dovecot: Dovecot, smtp: Smtp
                 ) -> Iterator[Callable[..., DeskProcess]]:
    made: list[DeskProcess] = []

    def make(**extra: str) -> DeskProcess:
        env = email_env(dovecot, smtp, FRONTDESK_EMAIL_ALLOWED="@example.com", **extra)
        made.append(DeskProcess(tmp_path / "home", env))
        return made[-1]

    yield make
    for process in made:
        process.stop()

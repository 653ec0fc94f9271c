"""sd_notify on real Unix datagram sockets, and how `frontdesk run` knows systemd runs it."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.config.logs import stderr_is_journal, under_service_manager
from bot.service.notify import notify
from tests.service.systemd_tools import NotifyListener
from tests.support.child_process import clean_env


@pytest.fixture
def short_dir() -> Iterator[Path]:
    """A socket path must fit in 108 bytes: pytest's tmp_path may not."""
    with tempfile.TemporaryDirectory(prefix="fd-", dir="/tmp") as folder:
        yield Path(folder)


def test_a_path_socket_and_an_abstract_one_both_hear_it(short_dir: Path) -> None:
    for listener in (NotifyListener(short_dir / "notify"), NotifyListener()):
        try:
            assert notify("READY=1", "STATUS=Serving Telegram",
                          environ={"NOTIFY_SOCKET": listener.name})
            assert listener.wait_for("READY=1", 5) == ["READY=1\nSTATUS=Serving Telegram"]
        finally:
            listener.close()


def test_no_socket_is_a_quiet_no_and_a_gone_one_never_raises(short_dir: Path) -> None:
    assert notify("READY=1", environ={}) is False
    assert notify("READY=1", environ={"NOTIFY_SOCKET": str(short_dir / "gone")}) is False


def test_the_journal_is_recognised_by_its_device_and_inode(tmp_path: Path) -> None:
    with (tmp_path / "journal").open("w") as journal, (tmp_path / "other").open("w") as other:
        stat = os.fstat(journal.fileno())
        env = {"JOURNAL_STREAM": f"{stat.st_dev}:{stat.st_ino}"}
        assert stderr_is_journal(env, journal.fileno())
        assert not stderr_is_journal(env, other.fileno())  # inherited, but not this stream
        assert under_service_manager(env, journal.fileno())
        assert not under_service_manager(env, other.fileno())
    assert not stderr_is_journal({"JOURNAL_STREAM": "junk"})


def test_a_terminal_inside_a_desktop_service_is_still_a_terminal() -> None:
    main, terminal = os.openpty()  # a desktop's terminal app may run as a systemd service
    read_end, pipe = os.pipe()
    try:
        env = {"INVOCATION_ID": "0123456789abcdef"}
        assert not under_service_manager(env, terminal)
        assert under_service_manager(env, pipe)
        assert under_service_manager({"NOTIFY_SOCKET": "@x"}, terminal)
    finally:
        for fd in (main, terminal, read_end, pipe):
            os.close(fd)


def test_run_under_systemd_without_a_token_says_so_in_one_line(tmp_path: Path) -> None:
    env = clean_env(FRONTDESK_HOME=str(tmp_path), INVOCATION_ID="0123456789abcdef")
    done = subprocess.run([sys.executable, "-m", "bot.cli.main", "run"], env=env, cwd=tmp_path,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2  # RestartPreventExitStatus: no restart loop
    [line] = done.stderr.splitlines()
    assert "needs TELEGRAM_BOT_TOKEN or DISCORD_BOT_TOKEN in .env" in line

"""Whether a bot is running on a FRONTDESK_HOME: an advisory lock its `frontdesk run` holds.

``frontdesk run`` calls ``claim_home(home)`` at start and keeps the returned file open for its
life: a shared ``fcntl.flock`` on ``FRONTDESK_HOME/run.lock``. The kernel drops it when the
process ends, however it ends (even SIGKILL), so a stale lock cannot outlive a crash the way a
pid file does. ``exclusive_home`` (a restore) takes the same lock exclusively and without
waiting: it fails while any bot holds it, and a bot starting meanwhile waits for the restore.
"""

from __future__ import annotations

import fcntl
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

LOCK_FILENAME = "run.lock"


class HomeInUse(RuntimeError):
    """A bot is running on this home."""


def lock_path(home: Path) -> Path:
    """The lock file inside FRONTDESK_HOME."""
    return home / LOCK_FILENAME


def claim_home(home: Path) -> IO[bytes]:
    """Mark the home as in use by a running bot until the returned file is closed (or the
    process ends); waits while a restore holds it."""
    home.mkdir(parents=True, exist_ok=True)
    handle = lock_path(home).open("ab")
    fcntl.flock(handle.fileno(), fcntl.LOCK_SH)
    return handle


def home_in_use(home: Path) -> bool:
    """A running bot holds the home's lock now."""
    try:
        with exclusive_home(home):
            return False
    except HomeInUse:
        return True


@contextmanager
def exclusive_home(home: Path) -> Iterator[None]:
    """Hold the home alone (no bot running, none starting) for the block; HomeInUse if not."""
    home.mkdir(parents=True, exist_ok=True)
    with lock_path(home).open("ab") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise HomeInUse(f"a bot is running on {home}") from exc
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

"""Test helpers: the real ``systemd-analyze verify``, and a notify socket like systemd's.

``NotifyListener`` binds a Unix datagram socket (a path, or ``@name`` in the abstract
namespace) the way systemd does for a ``Type=notify`` service, and collects what arrives.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from bot.service.notify import socket_address


def verify(unit: Path, *, user: bool, runtime_dir: Path) -> subprocess.CompletedProcess[str]:
    """``systemd-analyze [--user] verify`` on a unit file, offline (no running systemd)."""
    if shutil.which("systemd-analyze") is None:
        pytest.fail("systemd-analyze is missing: install Debian's systemd package "
                    "(apt-get install systemd; `make test` does it)")
    runtime_dir.mkdir(mode=0o700, exist_ok=True)
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime_dir), "SYSTEMD_LOG_COLOR": "0"}
    command = ["systemd-analyze", *(["--user"] if user else []), "verify", str(unit)]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=60,
                          cwd=unit.parent)


class NotifyListener:
    """systemd's end of sd_notify: ``name`` goes into NOTIFY_SOCKET."""

    def __init__(self, path: Path | None = None) -> None:
        self.name = str(path) if path else f"@frontdesk-test-{uuid.uuid4().hex}"
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(socket_address(self.name))
        self.received: list[str] = []

    def wait_for(self, line: str, timeout: float = 30.0) -> list[str]:
        """Every datagram so far, once one of them has ``line`` among its lines."""
        deadline = time.monotonic() + timeout
        while not any(line in message.splitlines() for message in self.received):
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"no {line!r} from the bot; got {self.received}")
            self.sock.settimeout(left)
            try:
                self.received.append(self.sock.recv(4096).decode())
            except TimeoutError:
                continue
        return self.received

    def close(self) -> None:
        self.sock.close()
        if not self.name.startswith("@"):
            Path(self.name).unlink(missing_ok=True)

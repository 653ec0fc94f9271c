"""Run `frontdesk …` on a pseudo-terminal, the way a person types into it.

Usage::

    with Terminal(["setup"], cwd=tmp_path, env=env) as term:
        term.expect("Which chat platform?")
        term.send("t")
        assert term.wait() == 0

``pty.fork`` gives the child a controlling terminal of its own, so ``input`` uses readline
and ``getpass`` turns echo off exactly as for a person. Reading waits on the descriptor with
``select`` until a deadline: no sleeps.
"""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any


class Terminal:
    """One child process on a pty; ``output`` is everything it has printed so far."""

    def __init__(self, args: Sequence[str], *, cwd: Path, env: Mapping[str, str]) -> None:
        self.args, self.cwd, self.env = list(args), cwd, dict(env)
        self.output = ""  # what no expect has consumed yet
        self.transcript = ""  # everything
        self.pid = 0
        self.fd = -1
        self.status: int | None = None

    def __enter__(self) -> Terminal:
        pid, fd = pty.fork()
        if pid == 0:  # the child: become `frontdesk ARGS`
            try:  # 50 rows of 200 columns: readline scrolls long prompts on a 0-column one
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
                os.chdir(self.cwd)
                os.execve(sys.executable, [sys.executable, "-m", "bot.cli.main", *self.args],
                          self.env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        return self

    def __exit__(self, *exc: Any) -> None:
        if self.status is None:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)

    def _read(self, timeout: float) -> bool:
        """Read what is there within ``timeout``; False at the end of output."""
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            return False
        if not chunk:
            return False
        text = chunk.decode(errors="replace").replace("\r\n", "\n")
        self.output += text
        self.transcript += text
        return True

    def expect(self, text: str, timeout: float = 30.0) -> str:
        """Wait until ``text`` has been printed (after what an earlier expect consumed)."""
        deadline = time.monotonic() + timeout
        while text not in self.output:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(min(left, 1.0)):
                if text in self.output:
                    break
                raise AssertionError(f"never saw {text!r}; the terminal shows:\n"
                                     f"{self.transcript}")
        before, _, after = self.output.partition(text)
        self.output = after  # the next expect looks past this point
        return before + text

    def send(self, line: str) -> None:
        """Type a line and press Enter."""
        os.write(self.fd, line.encode() + b"\r")

    def type(self, keys: bytes) -> None:
        """Press keys (control characters and escape sequences too)."""
        os.write(self.fd, keys)

    def interrupt(self, timeout: float = 30.0) -> int:
        """Press Ctrl-C until the program ends (a press that lands while the program is
        between two reads of the terminal can be lost), then its exit status."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.type(b"\x03")
            until = time.monotonic() + 1.0
            while time.monotonic() < until:
                if not self._read(max(0.0, until - time.monotonic())):  # the end of output
                    return self.wait()
        raise AssertionError(f"Ctrl-C did not stop it; the terminal shows:\n{self.output}")

    def wait(self, timeout: float = 30.0) -> int:
        """Read to the end, then the exit status."""
        deadline = time.monotonic() + timeout
        while self._read(max(0.0, min(1.0, deadline - time.monotonic()))):
            if time.monotonic() > deadline:
                raise AssertionError(f"still running; the terminal shows:\n{self.output}")
        _, status = os.waitpid(self.pid, 0)
        self.status = os.waitstatus_to_exitcode(status)
        return self.status

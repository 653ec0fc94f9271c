"""Helpers for the crash tests: a worker process that signals its crash point, then SIGKILL.

A worker script (``tests/graphs/runs/crash_worker.py``,
``tests/graphs/codefirst/flow_worker.py``) takes the database path, a folder and a mode; it
touches ``folder/ready`` when it reaches the point where the test kills it, logs each node or
step body it ran to ``folder/ran.log``, and prints its result as JSON when it finishes.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tests.support.polling import wait_until


def start_worker(script: Path, tmp_path: Path, mode: str, *extra: str) -> subprocess.Popen[str]:
    """Run ``script`` on ``tmp_path/f.db`` in a new process."""
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "f.db"), str(tmp_path),
                             mode, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def finish(proc: subprocess.Popen[str]) -> Any:
    """Wait for a worker to end well; its printed JSON result."""
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    return json.loads(out)


def kill_when_ready(tmp_path: Path, proc: subprocess.Popen[str]) -> None:
    """SIGKILL the worker once it says it reached its crash point (polled, with a deadline)."""
    def ready() -> bool:
        assert proc.poll() is None, proc.communicate()[1]
        return (tmp_path / "ready").exists()

    wait_until(ready, 30, what="the worker's crash point", interval=0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    (tmp_path / "ready").unlink()


def ran(tmp_path: Path) -> Counter[str]:
    """How often each node or step body ran, over every process so far."""
    return Counter((tmp_path / "ran.log").read_text().split())


# -- the worker's side -------------------------------------------------------------------
def say_ready(folder: Path) -> None:
    """Tell the test the crash point is reached (written whole, then renamed into place)."""
    (folder / "ready.tmp").write_text(str(os.getpid()))
    (folder / "ready.tmp").rename(folder / "ready")


def log_ran(folder: Path, name: str) -> None:
    """Append one run of a node or step body to ``ran.log``, durably (it must survive SIGKILL)."""
    with open(folder / "ran.log", "a", encoding="utf-8") as log:
        log.write(name + "\n")
        log.flush()
        os.fsync(log.fileno())

"""Bench start-up: `frontdesk run` to its first Telegram poll and its idle memory, against
`python -c 'import telegram'` in the same run.

Usage:
    .venv/bin/python bench/start.py              # 7 starts of each, medians
    .venv/bin/python bench/start.py --runs 3

`frontdesk run` starts as a subprocess (offline model, a temporary FRONTDESK_HOME, no MCP
file) polling the fake Bot API (``tests/fakes/telegram_server.py``) on loopback. Its time is
from process start to the first ``getUpdates`` the fake receives; its processor time (user +
system, ``/proc/PID/stat``) is read then too, as it suffers less from a busy machine; its
memory is VmRSS (``/proc/PID/status``) once it is idle in that long poll. The reference is
``python -c 'import telegram'``, held open after the import so that it can be measured the same
way. Starts alternate between the two, so a noisy machine slows both alike: the ratios are
what to compare across runs and machines. One more start under ``-X importtime`` counts the
modules imported by the first poll and names the heavy ones that were.

Targets, set on a machine where `frontdesk run` took 1.01 s and 66.0 MB: ≤ 0.8 s and ≤ 55 MB,
i.e. the ratios ``before × 0.8 / 1.01`` and ``before × 55 / 66`` (``BEFORE``, measured here
in the same way before the heavy imports were deferred).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

# The repository instead of bench/, whose telegram.py would shadow python-telegram-bot.
sys.path.remove(str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fakes.telegram_server import FakeTelegramServer
from tests.support.child_process import clean_env

# Libraries that answering a text message does not need; any of them loaded at start is a cost.
HEAVY = ("PIL", "pypdf", "mcp", "cryptography", "jwt", "pydantic", "discord", "aiohttp.web",
         "openai", "anthropic", "dateparser", "icalendar", "recurring_ical_events")
# `import telegram`, then say so and wait (on stdin) so that the finished import is measured.
REFERENCE = "import sys, telegram; print('ready', flush=True); sys.stdin.read()"
IDLE_SETTLE_S = 1.0  # after the first poll: start-up work still queued has finished by then
# Ratios to `import telegram` (time, processor time, memory) before the heavy imports were
# deferred, medians of 7 starts on a busy 2-core machine.
BEFORE = {"time": 3.1, "cpu": 3.2, "memory": 1.44}
TARGETS = {"time": BEFORE["time"] * 0.8 / 1.01, "cpu": BEFORE["cpu"] * 0.8 / 1.01,
           "memory": BEFORE["memory"] * 55 / 66}


@dataclass(frozen=True)
class Sample:
    """One start: seconds of wall-clock time and of processor time, and memory in MB."""

    time: float
    cpu: float
    memory: float


def cpu_s(pid: int) -> float:
    """User + system time a live process has used so far, from /proc (Linux)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_mb(pid: int) -> float:
    """Resident memory of a live process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


def measure_frontdesk(server: FakeTelegramServer, flags: tuple[str, ...] = (),
                      stderr: IO[bytes] | int = subprocess.DEVNULL) -> Sample:
    """Start `frontdesk run` in a fresh home, measure it at its first poll and once idle."""
    with tempfile.TemporaryDirectory() as home:
        env = clean_env() | {
            "TELEGRAM_BOT_TOKEN": server.token, "TELEGRAM_BASE_URL": server.base_url,
            "TELEGRAM_OWNER_ID": "1", "FRONTDESK_HOME": home,
            "FRONTDESK_MODEL_PROVIDER": "offline"}
        polls = server.polls
        started = time.perf_counter()
        proc = subprocess.Popen([sys.executable, *flags, "-m", "bot.cli.main", "run"], env=env,
                                cwd=home, stdout=subprocess.DEVNULL, stderr=stderr)
        try:
            server.wait_for_sync(lambda: server.polls > polls or proc.poll() is not None, 60)
            if proc.poll() is not None:
                raise RuntimeError(f"frontdesk run exited with status {proc.returncode}")
            elapsed, cpu = time.perf_counter() - started, cpu_s(proc.pid)
            time.sleep(IDLE_SETTLE_S)
            return Sample(elapsed, cpu, rss_mb(proc.pid))
        finally:
            if proc.poll() is None:
                proc.terminate()
                proc.wait(10)


def measure_reference() -> Sample:
    """A finished `import telegram`, measured the same way."""
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", REFERENCE], env=clean_env(),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdin is not None
    proc.stdout.readline()
    sample = Sample(time.perf_counter() - started, cpu_s(proc.pid), rss_mb(proc.pid))
    proc.stdin.close()
    proc.wait(10)
    return sample


def modules_at_first_poll(server: FakeTelegramServer) -> list[str]:
    """Every module `frontdesk run` has imported once idle (one start under -X importtime)."""
    with tempfile.TemporaryFile() as errors:
        measure_frontdesk(server, ("-X", "importtime"), errors)
        errors.seek(0)
        lines = errors.read().decode(errors="replace").splitlines()
    return [line.rsplit("|", 1)[1].strip() for line in lines
            if line.startswith("import time:") and not line.endswith("imported package")]


def median(samples: list[Sample]) -> Sample:
    return Sample(*(statistics.median(getattr(s, key) for s in samples)
                    for key in ("time", "cpu", "memory")))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    frontdesk: list[Sample] = []
    reference: list[Sample] = []
    with FakeTelegramServer() as server:
        measure_frontdesk(server)  # warms the file cache for both
        measure_reference()
        for _ in range(args.runs):
            reference.append(measure_reference())
            frontdesk.append(measure_frontdesk(server))
        modules = modules_at_first_poll(server)
    ours, theirs = median(frontdesk), median(reference)
    print(f"medians of {args.runs} starts        time     cpu   memory")
    for name, sample in (("frontdesk run, first getUpdates", ours),
                         ("python -c 'import telegram'", theirs)):
        print(f"{name:32} {sample.time:5.2f} s {sample.cpu:5.2f} s {sample.memory:5.1f} MB")
    ratios = {key: getattr(ours, key) / getattr(theirs, key) for key in BEFORE}
    print(f"{'ratio (target)':32}" + "".join(
        f" {ratios[key]:4.2f}x ({TARGETS[key]:.2f}x, was {BEFORE[key]:.2f}x)"
        for key in ("time", "cpu", "memory")))
    heavy = [name for name in HEAVY if name in modules]
    print(f"modules imported by the first poll: {len(modules)}; heavy ones among them: "
          f"{', '.join(heavy) or 'none'}")
    met = all(ratios[key] <= TARGETS[key] for key in ("cpu", "memory"))
    print("meets the targets (cpu, memory)" if met else "MISSES the targets (cpu, memory)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

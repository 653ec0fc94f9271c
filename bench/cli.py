"""Bench: how long `frontdesk --help` takes, against a bare interpreter start in the same run.

Target: `frontdesk --help` ≤ 0.3 s, which needs the SDKs imported lazily. The
reference is `python -c pass` with the same interpreter, so the ratio shows what our imports
add on this machine whatever its speed.

Usage: .venv/bin/python bench/cli.py [runs]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

FRONTDESK = Path(sys.executable).with_name("frontdesk")


def timed(command: list[str], runs: int) -> list[float]:
    """Wall-clock seconds of each of ``runs`` runs of ``command``."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return times


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    bare = statistics.median(timed([sys.executable, "-c", "pass"], runs))
    help_ = statistics.median(timed([str(FRONTDESK), "--help"], runs))
    print(f"python -c pass     median {bare * 1000:7.1f} ms")
    print(f"frontdesk --help   median {help_ * 1000:7.1f} ms   ({help_ / bare:.1f}x the bare "
          f"interpreter; target <= 300 ms: {'met' if help_ <= 0.3 else 'MISSED'})")


if __name__ == "__main__":
    main()

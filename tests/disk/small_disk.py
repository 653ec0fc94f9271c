"""A real small filesystem for a test: a tmpfs of a given size, mounted and unmounted as root.

``small_disk(folder, size)`` mounts a tmpfs (``size=`` caps it) on ``folder`` and skips the
test, saying why, where it cannot (not root, no mount command, a container that forbids it).
``fill(disk)`` writes a filler file until the filesystem refuses (``ENOSPC``), so every later
write that needs a new block fails as on a real full disk; deleting the filler frees it again.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

FILLER = "filler.bin"
CHUNK = 64 * 1024


@contextmanager
def small_disk(folder: Path, size: str) -> Iterator[Path]:
    """``folder`` as the mount point of a tmpfs of ``size`` (e.g. "8m") while inside."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (run as root to test a full disk)")
    mount = shutil.which("mount")
    if mount is None:
        pytest.skip("no mount command here: cannot make a small filesystem")
    folder.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([mount, "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or done.returncode})")
    try:
        yield folder
    finally:
        subprocess.run([shutil.which("umount") or "umount", "-l", str(folder)],
                       capture_output=True, check=False)


def fill(disk: Path) -> Path:
    """Write a filler file on ``disk`` until the filesystem is full; the filler's path."""
    filler = disk / FILLER
    block = os.urandom(CHUNK)
    with filler.open("ab", buffering=0) as out:
        for size in (CHUNK, 4096, 1):
            try:
                while True:
                    out.write(block[:size])
            except OSError as full:
                if full.errno != errno.ENOSPC:
                    raise
    return filler


def free_bytes(disk: Path) -> int:
    """Bytes an unprivileged write could still take on ``disk``."""
    stat = os.statvfs(disk)
    return stat.f_bavail * stat.f_frsize

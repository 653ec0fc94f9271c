"""Helpers for the backup tests: `frontdesk` as a subprocess on a home, and databases at a
chosen schema state (all of this version's migrations, a prefix of them, or a newer one's)."""

from __future__ import annotations

import hashlib
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from bot.schema import ordered_migrations
from sqlitedb import connect, migrate
from tests.support.child_process import clean_env as without_foreign

ROOT = Path(__file__).resolve().parent.parent.parent
NEWER = "9.9.9"  # the version said to have written a 'newer' database


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    """The developer's own settings out; this home and the offline model in."""
    return without_foreign(**{"FRONTDESK_HOME": str(home), "FRONTDESK_MODEL_PROVIDER": "offline",
                              "FRONTDESK_MERGE_WINDOW": "0", "PYTHONPATH": str(ROOT), **extra})


def frontdesk(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run one `frontdesk` command on ``home`` (no terminal, no .env), wait for it."""
    return subprocess.run([sys.executable, "-m", "bot.cli.main", *args],
                          env=clean_env(home, **env), cwd=home.parent, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def written_path(done: subprocess.CompletedProcess[str]) -> Path:
    """The file `frontdesk backup` says it wrote."""
    assert done.returncode == 0, done.stderr
    return Path(done.stdout.strip().rsplit(" to ", 1)[1])


def database_at(home: Path, drop_last: int = 0) -> Path:
    """A database with every migration of this version but the last ``drop_last``."""
    path = home / "frontdesk.db"
    migrations = ordered_migrations()
    conn = connect(path)
    migrate(conn, migrations[:len(migrations) - drop_last], atomic=True)
    conn.close()
    return path


def make_newer(path: Path, name: str = "zz_from_the_future_001") -> None:
    """Record a migration this version does not know, as a newer Frontdesk would have."""
    conn = sqlite3.connect(path)
    conn.execute("INSERT INTO migrations (name, applied_at, version) VALUES (?, ?, ?)",
                 (name, time.time(), NEWER))
    conn.commit()
    conn.close()


def digest(path: Path) -> str:
    """The file's bytes, hashed."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(root: Path) -> dict[str, str]:
    """Every file and folder under ``root``: each file's bytes hashed, each folder named, each
    link's target; to compare a tree before and after, byte for byte."""
    found: dict[str, str] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = f"link to {os.readlink(path)}"
        elif path.is_dir():
            found[name] = "folder"
        else:
            found[name] = digest(path)
    return found


def notes(path: Path) -> list[str]:
    """Every note's text in a database file."""
    conn = sqlite3.connect(path)
    try:
        return [row[0] for row in conn.execute("SELECT text FROM memory_notes ORDER BY id")]
    finally:
        conn.close()

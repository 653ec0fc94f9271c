"""Where a database file stands against this version's migrations (``bot.migrations``).

``frontdesk doctor``, a restore, an upgrade check and ``--version`` ask "which migrations does
this version know?" of the one ordered list in ``bot.migrations``. ``read_state`` tells,
without writing a byte, where a database file stands against it: up to date, migrations to
apply, or written by a newer Frontdesk (a migration this version does not know).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

from bot import migrations
from sqlitedb import Migration, applied_migrations, running_version


def known_migrations() -> set[str]:
    """Every migration name this version of Frontdesk knows."""
    return {name for name, _ in ordered_migrations()}


def ordered_migrations() -> list[Migration]:
    """Every migration, in the order an upgrade applies them (read when asked, so a test may
    put a list of its own in ``bot.migrations.MIGRATIONS``)."""
    return list(migrations.MIGRATIONS)


@dataclass(frozen=True)
class SchemaState:
    """Where a database file stands against this version of Frontdesk."""

    path: Path
    exists: bool
    applied: dict[str, str | None] = field(default_factory=dict)  # name -> version that did it
    pending: list[str] = field(default_factory=list)  # known here, not applied yet, in order
    unknown: list[str] = field(default_factory=list)  # applied by a newer Frontdesk
    problem: str = ""  # the file cannot be read

    @property
    def newer_version(self) -> str:
        """Which Frontdesk applied the migrations this one does not know."""
        versions = sorted({v for name in self.unknown if (v := self.applied.get(name))})
        return " / ".join(versions) if versions else "a newer version"

    def newer_line(self) -> str:
        """The one line every command stops with on a newer database."""
        return (f"{self.path} was written by Frontdesk {self.newer_version} (migration "
                f"{self.unknown[0]}), newer than this Frontdesk {running_version()}: upgrade "
                "Frontdesk, or restore a backup taken by this version (`frontdesk restore`)")

    def summary(self) -> str:
        """For ``frontdesk --version``: 'no database yet', 'N migrations, up to date', ..."""
        if not self.exists:
            return "no database yet"
        if self.problem:
            return f"cannot be read ({self.problem})"
        if self.unknown:
            return f"written by Frontdesk {self.newer_version}, newer than this one"
        count = f"{len(self.applied)} migrations"
        return f"{count}, {len(self.pending)} to apply" if self.pending else f"{count}, up to date"


def read_state(path: Path) -> SchemaState:
    """The file's migrations against this version's, read-only (no byte of it is written)."""
    if not path.exists():
        return SchemaState(path, exists=False, pending=[n for n, _ in ordered_migrations()])
    # With no -wal beside it, the file alone is the whole database (a clean close folds the WAL
    # in): read it as immutable, which creates no -wal or -shm. With one, a bot has it open
    # (or crashed): read-only through the WAL, which already exists.
    wal = path.with_name(path.name + "-wal").exists()
    mode = "mode=ro" if wal else "immutable=1"
    try:
        conn = sqlite3.connect(f"{path.resolve().as_uri()}?{mode}", uri=True, timeout=5)
        try:
            applied = applied_migrations(conn)
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return SchemaState(path, exists=True, problem=str(exc))
    known = known_migrations()
    return SchemaState(path, exists=True, applied=applied,
                       pending=[n for n, _ in ordered_migrations() if n not in applied],
                       unknown=sorted(set(applied) - known))

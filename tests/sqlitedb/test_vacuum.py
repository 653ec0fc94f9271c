"""A prune's checkpoint while the running bot reads: it never waits, so no write stalls."""

from __future__ import annotations

import time
from pathlib import Path

from sqlitedb import connect
from sqlitedb.vacuum import fold_wal, reclaim


def test_a_checkpoint_beside_an_open_read_waits_for_nobody(tmp_path: Path) -> None:
    path = tmp_path / "frontdesk.db"
    bot = connect(path)  # the running bot: its writer...
    bot.execute("CREATE TABLE notes (n INTEGER)")
    bot.executemany("INSERT INTO notes VALUES (?)", [(n,) for n in range(2000)])
    search = connect(path).execute("SELECT n FROM notes")  # ...and a search under way
    assert search.fetchone() is not None  # its snapshot stays open until the cursor closes
    pruner = connect(path)  # `frontdesk prune`, with the same 30 s busy timeout
    pruner.execute("DELETE FROM notes WHERE n < 1000")
    started = time.monotonic()
    reclaim(pruner)  # a TRUNCATE checkpoint waited the busy timeout here, writers held off
    bot.execute("INSERT INTO notes VALUES (-1)")
    assert time.monotonic() - started < 5
    assert pruner.execute("PRAGMA busy_timeout").fetchone()[0] == 30_000
    assert not fold_wal(pruner)  # the reader still holds the WAL: folded another time
    search.close()
    assert fold_wal(pruner)
    assert Path(f"{path}-wal").stat().st_size == 0

"""SQLite's memory, as ``kill -USR1`` logs it: a connection's page cache grows with what it
reads, up to ``cache_size``, and no further however much more it reads."""

from __future__ import annotations

from pathlib import Path

from sqlitedb import connect
from sqlitedb.memory import give_back, sqlite_memory


def held() -> int:
    memory = sqlite_memory()
    assert memory is not None  # the library the sqlite3 module uses is found
    return memory[0]


def test_a_page_cache_grows_to_its_cache_size_and_stops(tmp_path: Path) -> None:
    conn = connect(tmp_path / "big.db")
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT)")
    conn.executemany("INSERT INTO t (body) VALUES (?)", [("x" * 1000,) for _ in range(8_000)])
    conn.close()  # some 8 MB on disk, none of it cached
    reader = connect(tmp_path / "big.db")
    reader.execute("PRAGMA cache_size=-1000")  # 1,000 KiB
    start = held()
    reader.execute("SELECT SUM(LENGTH(body)) FROM t WHERE id <= 400").fetchone()  # ~400 KB
    partly = held() - start
    reader.execute("SELECT SUM(LENGTH(body)) FROM t").fetchone()  # all 8 MB
    full = held() - start
    reader.execute("SELECT SUM(LENGTH(body)) FROM t").fetchone()  # again: nothing new
    again = held() - start
    reader.close()
    assert 300 * 1024 < partly < full  # grows with what was read...
    assert full < 1_500 * 1024  # ...to about cache_size, not the 8 MB read
    assert again <= full + 64 * 1024


def anonymous_kib() -> int:
    status = Path("/proc/self/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith("RssAnon:")).split()[1])


def test_give_back_returns_freed_memory_a_thread_kept(tmp_path: Path) -> None:
    import threading

    last: list[bytearray] = []

    def churn() -> None:  # a worker thread's arena: many chunks, freed all but the last,
        chunks = [bytearray(3_000) for _ in range(20_000)]  # which holds the arena's top
        last.append(chunks[-1])  # 60 MB in all, above Python's own arenas

    worker = threading.Thread(target=churn)
    worker.start()
    worker.join()
    kept = anonymous_kib()
    assert give_back()
    assert anonymous_kib() < kept - 20_000  # most of the 60 MB is the system's again
    assert len(last[0]) == 3_000

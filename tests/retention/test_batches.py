"""A prune in batches: the same rows go as in one go, a write waits one batch at most, the
freed pages go back a step at a time, and a short FRONTDESK_KEEP_DAYS prunes more often."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench.writes import writes_during
from bot.config.settings import Settings
from bot.retention.prune import DAY_S, TIE_S, Pruned, cuts, prune, prune_interval, prune_often
from bot.schema import open_database
from sqlitedb.database import Database
from sqlitedb.vacuum import reclaim

NOW = time.time()
OLD = NOW - 100 * DAY_S  # past the default 90 days


@pytest.fixture
def home(tmp_path: Path) -> Settings:
    return Settings.from_env({"FRONTDESK_HOME": str(tmp_path)})


def add_runs(db: Database, prefix: str, ends: list[float], events: int = 3,
             status: str = "completed") -> None:
    """Runs that ended at ``ends``, each with ``events`` events, in one transaction."""
    with db.transaction() as conn:
        conn.executemany(
            "INSERT INTO runs (id, workflow, status, input, meta, max_steps, started_at,"
            " updated_at, ended_at) VALUES (?, 'triage', ?, '{}', '{}', 25, ?, ?, ?)",
            [(f"{prefix}{n}", status, at, at, at) for n, at in enumerate(ends)])
        conn.executemany(
            "INSERT INTO run_events (run_id, seq, t, event, node, data) VALUES (?, ?, ?,"
            " 'node_end', 'reply', ?)",
            [(f"{prefix}{n}", seq, at, "x" * 200) for n, at in enumerate(ends)
             for seq in range(events)])


def count(db: Database, table: str) -> int:
    return int(db.reader.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def test_batches_remove_what_one_transaction_would(home: Settings) -> None:
    with open_database(home.database) as db:
        add_runs(db, "old-", [OLD + n for n in range(1_000)])
        add_runs(db, "tied-", [OLD + 2_000.0] * 120)  # more ended at one moment than a batch
        add_runs(db, "fresh-", [NOW - 60.0 + n for n in range(10)])
        add_runs(db, "open-", [OLD] * 3, status="running")  # an end time, yet never removed
        before = NOW - 90 * DAY_S
        marks = list(cuts(db, before, 50))  # counted on from each cut-off, removed or not
        # 19 of 50 old runs each, the tied moment, just past it, then ``before`` itself
        assert marks == sorted(marks) and len(marks) == 19 + 3 and marks[-1] == before
        assert marks[19:21] == [OLD + 2_000.0, OLD + 2_000.0 + TIE_S]
        result = prune(db, home, batch=50)
        assert result.removed["runs"] == 1_120
        assert result.removed["run_events"] == 3 * 1_120
        remaining = {str(row[0]) for row in db.reader.execute("SELECT id FROM runs")}
        assert remaining == {f"fresh-{n}" for n in range(10)} | {f"open-{n}" for n in range(3)}


def test_each_batch_lets_about_a_batch_of_runs_go(home: Settings) -> None:
    with open_database(home.database) as db:
        add_runs(db, "old-", [OLD + n for n in range(1_000)])
        before = NOW - 90 * DAY_S
        gone: list[int] = []
        for cut in cuts(db, before, 100):
            with db.transaction() as conn:
                gone.append(conn.execute("DELETE FROM runs WHERE ended_at < ?",
                                         (cut,)).rowcount)
        assert gone == [100] * 10  # the last cut-off is ``before`` itself


def test_a_write_waits_for_one_batch_not_the_whole_prune(home: Settings) -> None:
    with open_database(home.database) as db:
        for start in range(0, 20_000, 5_000):
            add_runs(db, f"old-{start}-", [OLD + start + n for n in range(5_000)], events=8)
        timed = writes_during(db, lambda: prune(db, home, batch=200))
        result = timed.result
        waits = timed.waits
        took = timed.seconds
        assert result.removed["runs"] == 20_000 and count(db, "run_events") == 0
        assert len(waits) > 20  # the writes went on during the prune
        assert max(waits) < took / 5, (max(waits), took)  # in one transaction: ~ all of it


def test_freed_pages_go_back_a_few_at_a_time(home: Settings) -> None:
    with open_database(home.database) as db:
        add_runs(db, "old-", [OLD + n for n in range(3_000)], events=10)
        db.writer.execute("DELETE FROM run_events")
        free = int(db.writer.execute("PRAGMA freelist_count").fetchone()[0])
        assert free > 100
        assert reclaim(db.writer, pages=16, pause=0) == free
        assert db.writer.execute("PRAGMA freelist_count").fetchone()[0] == 0


def test_a_short_keep_is_pruned_every_quarter_of_it() -> None:
    assert prune_interval(0.5) == 3 * 3600  # twelve hours kept: pruned every three
    assert prune_interval(90) == DAY_S == prune_interval(4)  # the daily task's pace
    assert prune_interval(1e-9) == 1.0


def test_prune_often_sleeps_a_quarter_then_prunes_again_and_again() -> None:
    slept: list[float] = []
    pruned: list[int] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) > 3:
            raise asyncio.CancelledError  # the bot stops

    async def prune_now() -> Pruned:
        pruned.append(len(slept))
        if len(pruned) == 2:
            raise OSError("disk full")  # one failed round: the next still comes
        return Pruned(0.5, datetime.now(UTC), dry_run=False)

    with pytest.raises(asyncio.CancelledError):
        asyncio.run(prune_often(0.5, prune_now, sleep))
    assert slept == [3 * 3600.0] * 4 and pruned == [1, 2, 3]


def test_prune_often_leaves_a_long_keep_to_the_daily_task() -> None:
    async def never(seconds: float) -> None:
        raise AssertionError("slept")

    async def prune_now() -> Pruned:
        raise AssertionError("pruned")

    asyncio.run(prune_often(90, prune_now, never))  # returns at once

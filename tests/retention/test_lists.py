"""The lists read along an index, whatever the number of runs (the times are bench/lists.py's)."""

from __future__ import annotations

from pathlib import Path

from bot.schema import open_database

PAGES = {  # what `frontdesk runs` and the dashboard ask (graphs.runs.reading.RunReading.runs)
    "SELECT id FROM runs ORDER BY started_at DESC, rowid DESC LIMIT 20": "runs_by_start",
    "SELECT id FROM runs WHERE started_at < 5 ORDER BY started_at DESC, rowid DESC LIMIT 20":
        "runs_by_start",
    "SELECT id FROM runs WHERE status = 'failed' AND started_at < 5"
    " ORDER BY started_at DESC, rowid DESC LIMIT 20": "runs_by_status_start",
    "SELECT id FROM runs WHERE +status IN ('completed', 'failed', 'cancelled')"
    " AND ended_at < 5": "runs_by_end",
    # a batched prune's next cut-off (RunStore.ended_after)
    "SELECT ended_at FROM runs WHERE ended_at >= 1 AND ended_at < 5 AND +status IN"
    " ('completed', 'failed', 'cancelled') ORDER BY ended_at LIMIT 1 OFFSET 200": "runs_by_end",
}


def test_each_list_and_the_prune_use_an_index(tmp_path: Path) -> None:
    with open_database(tmp_path / "frontdesk.db") as db:
        for query, index in PAGES.items():
            plan = " ".join(row[3] for row in db.reader.execute("EXPLAIN QUERY PLAN " + query))
            assert "USING INDEX runs_by" in plan or "USING COVERING INDEX runs_by" in plan, plan
            assert "TEMP B-TREE" not in plan, plan  # read in order, never sorted
            assert index in plan


def test_a_page_of_people_reads_along_its_index(tmp_path: Path) -> None:
    query = ("SELECT user_id FROM people WHERE asked_at < 5 ORDER BY asked_at DESC LIMIT 50")
    with open_database(tmp_path / "frontdesk.db") as db:
        plan = " ".join(row[3] for row in db.reader.execute("EXPLAIN QUERY PLAN " + query))
    assert "USING INDEX people_by_asked" in plan and "TEMP B-TREE" not in plan, plan


PRUNE_BATCH = {  # what each batch of the prune asks of the tables a message fills
    "UPDATE inbox SET payload = '{}' WHERE status != 'received' AND done_at < 5"
    " AND payload != '{}'": "inbox_by_done",
    "DELETE FROM inbox WHERE +platform = 'telegram' AND status != 'received' AND done_at < 5"
    " AND received_at < 5": "inbox_by_done",
    "DELETE FROM outbox WHERE sent_at < 5 OR (sent_at IS NULL AND failed_at < 5)":
        "outbox_by_sent",
    "SELECT run_id FROM run_chats WHERE started_at < 5": "run_chats_by_start",
}


def test_a_prune_batch_reads_only_rows_older_than_its_cut_off(tmp_path: Path) -> None:
    with open_database(tmp_path / "frontdesk.db") as db:
        for query, index in PRUNE_BATCH.items():
            plan = " ".join(row[3] for row in db.reader.execute("EXPLAIN QUERY PLAN " + query))
            assert f"USING INDEX {index}" in plan and "SCAN" not in plan, plan

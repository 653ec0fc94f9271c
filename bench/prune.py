"""Bench the first prune of a large, old database while the bot writes (issue 38).

Usage: ``.venv/bin/python bench/prune.py [--messages 100000] [--batch 200]``. Fills a database
in a temporary directory with that many answered messages, all 100 days old: a run each with
16 events, an inbox row and an outbox part (what a chat message leaves, `docs/operations.md`);
then prunes it with FRONTDESK_KEEP_DAYS' default while another thread writes on the same
writer connection as the bot's answers would, one small write every millisecond. Prints the
prune's time, its batches, the file before and after, and the writes' longest and p99 wait
(with ``--batch 0``: all in one transaction, as before the batches).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

# The repository instead of bench/, whose email.py would shadow the standard library's.
_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.writes import writes_during  # noqa: E402
from bot.config.settings import Settings  # noqa: E402
from bot.retention.prune import cuts, prune  # noqa: E402
from bot.schema import open_database  # noqa: E402
from graphs.runs import RunInfo, RunStore  # noqa: E402
from sqlitedb.database import Database  # noqa: E402

DAY = 86_400.0
EVENTS = 16


def fill(db: Database, messages: int) -> None:
    """``messages`` answered messages, a second apart, the newest 100 days ago."""
    start = time.time() - 100 * DAY - messages
    for first in range(0, messages, 10_000):
        numbers = range(first, min(messages, first + 10_000))
        with db.transaction() as conn:
            RunStore(db).add_ended(
                RunInfo(f"run-{n:08d}", "triage", "completed", "quick_reply", None,
                        {"user": f"telegram:{n % 200}", "chat_id": str(n % 200)},
                        start + n, start + n + 0.5) for n in numbers)
            RunStore(db).add_events(
                (f"run-{n:08d}", seq, start + n, "node_end", "reply",
                 '{"text": "' + "x" * 150 + '"}') for n in numbers for seq in range(EVENTS))
            conn.executemany(
                "INSERT INTO inbox (platform, chat_id, message_id, user_id, payload, status,"
                " run_id, received_at, done_at) VALUES ('telegram', ?, ?, ?, ?, 'answered', ?,"
                " ?, ?)", ((str(n % 200), str(n), str(n % 200), '{"text": "' + "y" * 200 + '"}',
                            f"run-{n:08d}", start + n, start + n + 0.5) for n in numbers))
            conn.executemany(
                "INSERT INTO outbox (platform, chat_id, reply_key, part_no, parts, text,"
                " created_at, sent_at) VALUES ('telegram', ?, ?, 1, 1, ?, ?, ?)",
                ((str(n % 200), f"r{n}", "z" * 300, start + n, start + n + 0.5)
                 for n in numbers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=200, help="runs a batch (0: one go)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        settings = Settings.from_env({"FRONTDESK_HOME": folder})
        with open_database(settings.database) as db:
            began = time.perf_counter()
            fill(db, args.messages)
            print(f"filled {args.messages:,} messages in {time.perf_counter() - began:.1f} s")
            batches = len(list(cuts(db, time.time() - 90 * DAY, args.batch or 10**12)))
            timed = writes_during(db, lambda: prune(db, settings, batch=args.batch or 10**12))
            result = timed.result
            took = timed.seconds
            waits = sorted(timed.waits)
            print(f"pruned {result.total:,} rows in {took:.1f} s, {batches} batches; file "
                  f"{result.bytes_before / 1e6:.0f} -> {result.bytes_after / 1e6:.1f} MB")
            print(f"{len(waits):,} writes meanwhile: longest wait {waits[-1] * 1000:.0f} ms, "
                  f"p99 {waits[int(len(waits) * 0.99)] * 1000:.1f} ms, "
                  f"median {statistics.median(waits) * 1000:.2f} ms")


if __name__ == "__main__":
    main()

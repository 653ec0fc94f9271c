"""Bench the lists with a million runs: `frontdesk runs`, the dashboard's, people, a chat's search.

Usage: ``.venv/bin/python bench/lists.py [--runs 1000000]``. Fills a database in a temporary
directory (the runs with executemany in one transaction; 10,000 people; 20,000 lines of chat
history over 100 chats), then times each list (the median of 5) as the commands read it:
`frontdesk runs` (the first page, a page deep in the table with ``--before``), the dashboard's
run list (first page, a status's page), `frontdesk people` (the first page of 50, one
halfway down, and all 200 pages one after another), and one chat's history search.
Target: each ≤ 100 ms.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

# The repository instead of bench/, whose email.py would shadow the standard library's.
_BENCH = str(Path(__file__).resolve().parent)
if _BENCH in sys.path:
    sys.path.remove(_BENCH)
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.access.people import People  # noqa: E402
from bot.dashboard.data import list_runs  # noqa: E402
from bot.delivery.inbox import Inbox  # noqa: E402
from bot.schema import open_database  # noqa: E402
from graphs.runs import RunInfo, RunStore  # noqa: E402
from memory.notes import Memory  # noqa: E402
from sqlitedb.database import Database  # noqa: E402

STATUSES = ("completed", "completed", "completed", "failed", "cancelled")


def fill(db: Database, runs: int) -> None:
    start = time.time() - runs * 60.0  # a run a minute: two years of a busy desk
    ended = (RunInfo(f"run-{n:07d}", "triage", STATUSES[n % len(STATUSES)], "quick_reply", None,
                     {"user": f"telegram:{n % 500}", "chat_id": str(n % 100)},
                     start + n * 60.0, start + n * 60.0 + 1.5) for n in range(runs))
    with db.transaction() as conn:
        RunStore(db).add_ended(ended)
        conn.executemany("INSERT INTO people (platform, user_id, status, name, asked_at)"
                         " VALUES ('telegram', ?, 'allowed', ?, ?)",
                         ((str(n), f"person {n}", start + n) for n in range(10_000)))
        conn.executemany("INSERT INTO person_zones (scope, zone) VALUES (?, 'Europe/Oslo')",
                         ((f"telegram:{n}",) for n in range(0, 12_000, 10)))  # 200 unpaired
    memory = Memory(db)
    for n in range(20_000):
        memory.add_history(f"telegram:{n % 100}", "user", f"line {n} about the invoice {n % 37}")


def people_page(db: Database, before: float | None = None) -> int:
    """What `frontdesk people` reads for a page: the people, their zones, and on the first
    page the settings' people's zones and the mail correspondents."""
    people = People(db)
    page = people.page(50, before)
    people.zones_of([f"{person.platform}:{person.user_id}" for person in page])
    if before is None:
        people.zones_unpaired()
        Inbox(db).senders("email")
    return len(page)


def every_page(people: People, limit: int = 50) -> int:
    """Page through everyone as `frontdesk people` and its ``more:`` lines do; how many."""
    seen = 0
    page = people.page(limit)
    while page:
        seen += len(page)
        page = people.page(limit, page[-1].asked_at) if len(page) == limit else []
    return seen


def timed(read: Callable[[], object]) -> float:
    times = []
    for _ in range(5):
        began = time.perf_counter()
        read()
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=1_000_000)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as folder, open_database(Path(folder) / "f.db") as db:
        began = time.perf_counter()
        fill(db, runs)
        print(f"filled {runs:,} runs in {time.perf_counter() - began:.1f} s "
              f"({(Path(folder) / 'f.db').stat().st_size / 1e6:.0f} MB)")
        store = RunStore(db)
        middle = store.runs(limit=1, before=time.time() - runs * 30.0)[0].started_at
        halfway = People(db).page(5_001)[-1].asked_at
        lists: dict[str, Callable[[], object]] = {
            "frontdesk runs (first 20)": lambda: store.runs(limit=20),
            "frontdesk runs --before (halfway)": lambda: store.runs(limit=20, before=middle),
            "dashboard run list (first 100)": lambda: list_runs(store),
            "dashboard, failed, a page deep": lambda: list_runs(store, "failed", before=middle),
            "frontdesk people (first 50)": lambda: people_page(db),
            "frontdesk people --before (halfway)": lambda: people_page(db, halfway),
            "frontdesk people, every page": lambda: every_page(People(db)),
            "a chat's history search": lambda: Memory(db).search_history("telegram:7",
                                                                          "invoice"),
        }
        for name, read in lists.items():
            print(f"{name:<36} {timed(read):8.1f} ms")


if __name__ == "__main__":
    main()

"""The running bot's writes during other work on the same database: how long each waited.

Shared by ``bench/prune.py`` and ``tests/retention/test_batches.py``: another thread writes a
small row on the database's writer connection every millisecond, as the bot's answers would,
while the work runs; each write's wait is what a message would feel.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from sqlitedb.database import Database

T = TypeVar("T")


@dataclass
class Timed(Generic[T]):
    """What the work returned, how long it took, and each write's wait meanwhile."""

    result: T
    seconds: float = 0.0
    waits: list[float] = field(default_factory=list)  # seconds, in the order written


def writes_during(db: Database, work: Callable[[], T]) -> Timed[T]:
    """Run ``work`` while a thread writes on ``db``'s writer every millisecond."""
    waits: list[float] = []
    done = threading.Event()

    def answering() -> None:  # the bot's writes, on the same writer
        while not done.is_set():
            asked = time.perf_counter()
            db.writer.execute("INSERT OR REPLACE INTO cursors (name, value) VALUES"
                              " ('bench', ?)", (str(asked),))
            waits.append(time.perf_counter() - asked)
            time.sleep(0.001)

    writer = threading.Thread(target=answering)
    writer.start()
    began = time.perf_counter()
    try:
        result = work()
    finally:
        done.set()
        writer.join()
    return Timed(result, time.perf_counter() - began, waits)

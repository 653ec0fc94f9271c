"""`kill -USR1`'s line: what the soak bench reads from it is all there, and moves with the
process (more Python objects held: more blocks; more handed out by malloc: more in use)."""

from __future__ import annotations

import asyncio
import gc
import logging

import pytest

from bench.soak_run import HOLDING
from bot.cli.holdings import log_holdings, malloc_kib


def logged(caplog: pytest.LogCaptureFixture) -> tuple[str, ...]:
    caplog.clear()
    gc.collect()  # what earlier tests left for the collector must not be freed mid-test

    async def in_a_loop() -> None:
        log_holdings()

    with caplog.at_level(logging.INFO, logger="bot.cli.run"):
        asyncio.run(in_a_loop())
    [line] = [record.getMessage() for record in caplog.records]
    [fields] = HOLDING.findall(line)
    return tuple(fields)


def test_the_line_carries_tasks_sqlite_python_and_malloc(
        caplog: pytest.LogCaptureFixture) -> None:
    before = logged(caplog)
    assert before[0] == "1" and all(before), before  # every figure said (glibc here)
    small = [object() for _ in range(100_000)]  # Python's own arenas (objects of 512 B or less)
    large = [bytearray(2_000) for _ in range(5_000)]  # 10 MB from malloc
    after = logged(caplog)
    assert int(after[3]) >= int(before[3]) + 50_000  # Python's blocks
    assert int(after[4]) >= int(before[4]) + 9_000  # malloc's KiB in use
    assert len(small) == 100_000 and len(large) == 5_000


def test_malloc_in_use_drops_when_freed() -> None:
    figures = malloc_kib()
    assert figures is not None
    big = [bytes(1000) * 10 for _ in range(2_000)]  # 20 MB
    held = malloc_kib()
    del big
    freed = malloc_kib()
    assert held is not None and freed is not None
    assert held[0] - figures[0] > 15_000 and held[0] - freed[0] > 15_000

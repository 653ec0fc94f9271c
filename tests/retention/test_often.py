"""The running bot prunes a short FRONTDESK_KEEP_DAYS on its own, beside its other work."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from bot.app import assemble
from bot.config.settings import Settings
from tests.support.polling import until


async def test_the_served_bot_prunes_a_short_keep_without_being_asked(tmp_path: Path) -> None:
    settings = Settings.from_env({"FRONTDESK_HOME": str(tmp_path / "home"),
                                  "FRONTDESK_MODEL_PROVIDER": "offline",
                                  "FRONTDESK_KEEP_DAYS": str(2 / 86_400)})  # 2 s: every 0.5 s
    app = assemble(settings)
    old = time.time() - 60
    app.db.writer.execute(
        "INSERT INTO runs (id, workflow, status, input, meta, max_steps, started_at, updated_at,"
        " ended_at) VALUES ('old', 'triage', 'completed', '{}', '{}', 25, ?, ?, ?)",
        (old, old, old))
    jobs = app.serving()
    prunes = [job for job in jobs if job.__qualname__ == "prune_often"]
    for job in jobs:
        if job not in prunes:
            job.close()  # not started: only the prunes run here
    [task] = [asyncio.create_task(job) for job in prunes]
    try:
        deadline = time.monotonic() + 20
        while app.db.reader.execute("SELECT COUNT(*) FROM runs").fetchone()[0]:
            assert time.monotonic() < deadline and not task.done(), "never pruned"
            await asyncio.sleep(0.05)  # the prune's own pace, a real half second
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)  # a prune under way ends its batch
        app.db.close()


async def test_a_prune_cancelled_by_the_stop_ends_its_batch_before_the_cancel_returns(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The stop cancels the prune, then closes the database: the cancel comes back only once
    the worker thread has left its batch (closing under its statement crashed the process),
    and the thread was told to stop rather than run every batch left."""
    import threading

    from bot.retention import prune as pruning

    began, ended = threading.Event(), threading.Event()
    told: list[bool] = []

    def batches(db: object, settings: object, *, stop: threading.Event) -> None:
        began.set()
        told.append(stop.wait(10))  # one batch, until the stop is asked for
        ended.set()

    monkeypatch.setattr(pruning, "prune", batches)
    task = asyncio.create_task(pruning.prune_in_thread(None, None))  # type: ignore[arg-type]
    await until(began.is_set, 10)  # the thread has begun its batch (a threading.Event)
    assert began.is_set()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ended.is_set() and told == [True]

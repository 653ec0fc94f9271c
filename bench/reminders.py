"""Bench the reminder timer: how late a reminder fires on the real clock, against a bare sleep.

Usage: ``.venv/bin/python bench/reminders.py``. Ten reminders, 0.3 s apart, are set on a real
SQLite file and fired by the scheduler of ``bot.app`` (through the reminder graph, the
durable run and the outbox) to a recording adapter; each one's lateness is the time it reached
the adapter minus its due time. The reference, measured in the same run, is the lateness of a
bare ``asyncio.sleep`` to the same due times (the event loop's own precision). Prints both
medians and maxima and the ratio of the medians. Target: within ~2 s, nothing
polled; what remains above the reference is the firing run's own work.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bot.app import assemble
from bot.models import Models
from bot.models.offline import OfflineModel
from tests.support.harness import OWNER, RecordingAdapter, make_settings

COUNT, GAP_S = 10, 0.3


async def bare_sleep_lateness() -> list[float]:
    start, late = time.time(), []
    for i in range(1, COUNT + 1):
        due = start + i * GAP_S
        await asyncio.sleep(max(0.0, due - time.time()))
        late.append(time.time() - due)
    return late


async def timer_lateness(home: Path) -> list[float]:
    services = assemble(
        make_settings(home), models=Models(small=OfflineModel(role="small"),
                                           big=OfflineModel(role="big")))
    gateway = services.chat.gateway
    await gateway.start()
    adapter = RecordingAdapter()
    await gateway.attach(adapter)
    arrived: list[float] = []
    send = adapter.send

    async def timed(*args: object, **kwargs: object) -> str:
        arrived.append(time.time())
        return await send(*args, **kwargs)  # type: ignore[arg-type]

    adapter.send = timed  # type: ignore[method-assign]
    timer = asyncio.create_task(services.timer.run())
    zone, start = services.owner.zone(), time.time() + 0.5
    dues = [start + i * GAP_S for i in range(COUNT)]
    for i, due in enumerate(dues):
        services.reminders.store.add("owner", "telegram", OWNER, f"r{i}",
                               datetime.fromtimestamp(due, zone), zone=zone)
    deadline = time.monotonic() + 30
    while len(arrived) < COUNT and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    timer.cancel()
    return [at - due for at, due in zip(arrived, dues, strict=True)]


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        reference = asyncio.run(bare_sleep_lateness())
        ours = asyncio.run(timer_lateness(Path(folder) / "home"))
    ref_ms, our_ms = (statistics.median(x) * 1000 for x in (reference, ours))
    print(f"bare asyncio.sleep: median {ref_ms:.2f} ms late, max {max(reference) * 1000:.2f} ms")
    print(f"reminder timer:     median {our_ms:.2f} ms late, max {max(ours) * 1000:.2f} ms "
          f"(through the run, the outbox and the adapter)")
    print(f"ratio (timer / bare sleep, medians): {our_ms / max(ref_ms, 1e-3):.1f}x; "
          f"target: every one within 2000 ms -> {'met' if max(ours) < 2.0 else 'MISSED'}")


if __name__ == "__main__":
    main()

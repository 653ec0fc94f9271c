"""parallel: real overlap, the limit, fail fast or collect; finished calls survive a failure."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from graphs.codefirst import AgentKit, agent, flow_view, parallel, step, workflow
from graphs.runs import Runs, RunStore
from tests.fakes.model import FakeModel


class Gauge:
    """Counts calls in flight; each call waits until the test lets it go."""

    def __init__(self) -> None:
        self.now = self.peak = self.finished = 0
        self.release = asyncio.Event()
        self.crowd = asyncio.Event()

    async def work(self, n: int, want: int) -> int:
        self.now += 1
        self.peak = max(self.peak, self.now)
        if self.now >= want:
            self.crowd.set()
        await self.release.wait()
        self.now -= 1
        self.finished += 1
        return n * 10


class CrowdedModel(FakeModel):
    """A fake model that counts the calls it is answering at once."""

    def __init__(self) -> None:
        super().__init__(role="big")
        self.now = self.peak = 0

    async def complete(self, messages: Any, **options: Any) -> Any:
        self.now += 1
        self.peak = max(self.peak, self.now)
        try:
            return await super().complete(messages, **options)
        finally:
            self.now -= 1


async def test_three_agent_calls_overlap(tmp_path: Path) -> None:
    model = CrowdedModel()
    for word in ("one", "two", "three"):
        model.enqueue(text=word, delay_s=0.2)

    @workflow(name="fan", agents=AgentKit(models={"big": model}))
    async def fan() -> list[str]:
        return await parallel([agent("say", prompt="Say it.", input=n, key_by=n)
                               for n in range(3)])

    result = await fan.start(RunStore.open(tmp_path / "f.db"))
    assert result["result"] == ["one", "two", "three"]  # in input order
    assert model.peak == 3  # all three were being answered at once


async def test_the_limit_caps_calls_in_flight(tmp_path: Path) -> None:
    gauge = Gauge()

    @workflow(name="limited")
    async def limited() -> list[int]:
        return await parallel([step(gauge.work, n, 2, key=f"work{n}") for n in range(6)],
                              limit=2)

    task = asyncio.create_task(limited.start(RunStore.open(tmp_path / "f.db")))
    await asyncio.wait_for(gauge.crowd.wait(), 10)
    gauge.release.set()
    result = await asyncio.wait_for(task, 10)
    assert result["result"] == [0, 10, 20, 30, 40, 50]
    assert gauge.peak == 2 and gauge.finished == 6


async def test_fail_fast_cancels_the_rest_and_a_rerun_keeps_what_finished(tmp_path: Path) -> None:
    gauge, attempts = Gauge(), {"n": 0}

    async def flaky() -> int:
        attempts["n"] += 1
        await asyncio.wait_for(gauge.crowd.wait(), 10)  # fail while the slow one runs
        if attempts["n"] == 1:
            raise ConnectionError("the service is down")
        return 7

    def quick() -> int:
        return 1

    @workflow(name="fragile")
    async def fragile() -> list[Any]:
        return await parallel([step(quick), step(gauge.work, 2, 1, key="slow"), step(flaky)])

    store = RunStore.open(tmp_path / "f.db")
    runs = Runs(store)
    first = await runs.start(fragile)
    assert first.status == "failed" and "the service is down" in first["error"]
    assert gauge.finished == 0  # the slow one was cancelled, not waited for
    statuses = {s["key"]: s["status"] for s in flow_view(store.steps(first.run_id or ""))["steps"]}
    assert statuses == {"quick": "done", "slow": "cancelled", "flaky": "failed"}
    assert flow_view(store.steps(first.run_id or ""))["groups"] == [  # one fan-out block
        {"name": "parallel quick+slow+flaky", "children": [
            {"key": "quick", "status": "done"}, {"key": "slow", "status": "cancelled"},
            {"key": "flaky", "status": "failed"}]}]

    gauge.release.set()
    again = await runs.rerun(first.run_id or "")
    assert again.status == "completed" and again["result"] == [1, 20, 7]


async def test_collect_returns_failures_in_place(tmp_path: Path) -> None:
    def boom(n: int) -> int:
        raise ValueError(f"bad {n}")

    def fine(n: int) -> int:
        return n

    @workflow(name="collect")
    async def collect() -> list[str]:
        results = await parallel([step(fine, 1), step(boom, 2), lambda: step(fine, 3,
                                                                             key="fine3")],
                                 fail_fast=False)
        return [repr(r) if isinstance(r, Exception) else str(r) for r in results]

    result = await collect.start(RunStore.open(tmp_path / "f.db"))
    assert result["result"] == ["1", "ValueError('bad 2')", "3"]

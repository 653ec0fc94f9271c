"""A pipeline cell's fingerprint covers what its stage is: an edited prompt is refused."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphs.codefirst import AgentKit, Workflow, agent, ask, pipeline, workflow
from graphs.runs import Runs, RunStore
from tests.fakes.model import FakeModel


def shouting(model: FakeModel, prompt: str) -> Workflow:
    """Each word through an agent stage, then the owner's approval of the lot."""
    @workflow(name="shout", agents=AgentKit(models={"big": model}))
    async def shout(words: list[str]) -> dict[str, Any]:
        loud = await pipeline(words, agent("shout", prompt=prompt))
        decision = await ask("Post it?", key="post", input=loud, returns=list[str])
        return {"posted": decision.value if decision.approved else []}
    return shout


def tidying(model: FakeModel, version: int) -> Workflow:
    """A function stage whose prompt is written in its body (two versions of it)."""
    if version == 1:
        async def tidy(text: str) -> str:
            tidied: str = await agent("tidy", prompt="Tidy it.", input=text)
            return tidied
    else:
        async def tidy(text: str) -> str:
            tidied: str = await agent("tidy", prompt="Tidy it up, nicely.", input=text)
            return tidied

    @workflow(name="tidy", agents=AgentKit(models={"big": model}))
    async def tidy_all(words: list[str]) -> dict[str, Any]:
        tidied = await pipeline(words, tidy)
        decision = await ask("Keep?", key="keep", input=tidied, returns=list[str])
        return {"kept": decision.value if decision.approved else []}
    return tidy_all


async def test_an_edited_prompt_of_an_agent_stage_in_a_finished_cell_is_refused(
        tmp_path: Path) -> None:
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    asked = await runs.start(shouting(FakeModel(role="big", default_text="HI"), "Shout it."),
                             {"words": ["hi", "yo"]}, run_id="s1")
    assert asked.status == "waiting"

    model = FakeModel(role="big", default_text="HI")
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    runs.register(shouting(model, "Shout it louder."))
    refused = await runs.resume("s1", "Approve", by="owner")
    assert refused.status == "failed" and model.history == []
    assert "step 'shout/hi/shout' changed since it ran (prompt differ)" in refused["error"]

    again = await runs.rerun("s1", ["shout"])
    assert again.status == "completed" and again["posted"] == ["HI", "HI"]
    assert {c.messages[0].content for c in model.history} == {"Shout it louder."}


async def test_an_edited_prompt_in_a_function_stage_is_refused(tmp_path: Path) -> None:
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    asked = await runs.start(tidying(FakeModel(role="big", default_text="ok"), 1),
                             {"words": ["a"]}, run_id="t1")
    assert asked.status == "waiting"
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    runs.register(tidying(FakeModel(role="big", default_text="ok"), 1))  # the same code
    assert (await runs.resume("t1", "Approve", by="owner"))["kept"] == ["ok"]

    asked = await runs.start(tidying(FakeModel(role="big", default_text="ok"), 1),
                             {"words": ["a"]}, run_id="t2")
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    runs.register(tidying(FakeModel(role="big", default_text="ok"), 2))
    refused = await runs.resume("t2", "Approve", by="owner")
    assert refused.status == "failed"
    assert "step 'tidy/a/tidy' changed since it ran (code differ)" in refused["error"]

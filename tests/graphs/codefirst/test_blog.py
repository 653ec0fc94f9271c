"""The blog workflow as first specified: fan-out, a pipeline with per-section approvals,
restarts between answers, a SIGKILL midway; typed replay of generic dataclasses."""

from __future__ import annotations

import subprocess
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from graphs.codefirst import (
    AgentKit,
    Decision,
    Workflow,
    ask,
    flow_mermaid,
    flow_view,
    pipeline,
    workflow,
)
from graphs.codefirst.codec import from_json, label, to_json
from graphs.runs import Runs, RunStore
from tests.graphs.codefirst.blog import SLUGS, BlogModel, SectionDraft, blog_post
from tests.support.crashing import finish, kill_when_ready, ran, start_worker

WORKER = Path(__file__).with_name("blog_worker.py")
ASSEMBLED = "\n".join(f"{slug.title()} draft, humanized, checked" for slug in SLUGS)


def process(path: Path) -> tuple[Runs, BlogModel]:
    """A "new process": a new store, model and workflow object on the same database."""
    runs, model = Runs(RunStore.open(path)), BlogModel()
    runs.register(blog_post.using(AgentKit(models={"big": model})))
    return runs, model


def purposes(model: BlogModel) -> Counter[str]:
    return Counter(call.purpose or "" for call in model.history)


async def test_the_blog_runs_as_written_across_restarts(tmp_path: Path) -> None:
    runs, model = process(tmp_path / "f.db")
    asked = await runs.start("blog-post", {"topic": "tea"}, run_id="blog1")
    assert asked.status == "waiting" and [w["question"] for w in asked.waits] == ["Review outline"]
    assert asked.waits[0]["options"] == ["Approve", "Discard"]
    assert purposes(model) == {"research": 1, "outline": 1}

    runs, model = process(tmp_path / "f.db")
    reviews = await runs.resume("blog1", "Approve", by="owner")
    # every section's review is asked at once; each section was drafted, humanized, checked
    assert reviews.status == "waiting"
    assert sorted(w["question"] for w in reviews.waits) == [f"Section {s}" for s in sorted(SLUGS)]
    assert purposes(model) == {"draft_section": 3, "humanize": 3, "evidence_check": 3}

    for n, wait in enumerate(runs.store.waits("open", "blog1"), 1):
        runs, model = process(tmp_path / "f.db")
        done = await runs.resume("blog1", "Approve", by="owner", key=wait.key)
        assert done.status == ("completed" if n == len(SLUGS) else "waiting")
    assert done["result"] == ASSEMBLED
    assert purposes(model) == {"assemble": 1}  # the last process redid nothing else
    assert '"slug": "outro"' in model.history[0].messages[1].content  # typed sections in

    view = flow_view(runs.store.steps("blog1"))
    assert view["groups"] == [{"name": "parallel draft_section", "children": [
        {"key": f"draft_section[{slug}]", "status": "done"} for slug in SLUGS]}]
    [grid] = view["pipelines"]
    assert grid["stages"] == ["humanize", "evidence_check", "approve"]
    assert grid["items"] == [label(SectionDraft(slug, f"{slug.title()} draft"))
                             for slug in SLUGS]
    assert all(cell["status"] == "done" for row in grid["cells"] for cell in row)

    drawn = flow_mermaid(runs.store.steps("blog1"), "blog-post").splitlines()
    assert drawn[0] == "%% blog-post: drawn from its last run" and drawn[1] == "flowchart TD"
    order = [line.strip() for line in drawn if "-->" in line and "        " not in line]
    assert [edge.split(" --> ")[0].split("_", 1)[-1] for edge in order] == [
        "start", "research", "outline", "review_outline", "parallel_draft_section",
        "humanize_evidence_check_approve", "assemble"]
    assert sum("subgraph" in line for line in drawn) == 2


def test_the_blog_killed_midway_resumes_without_redoing_finished_calls(tmp_path: Path) -> None:
    def worker(mode: str) -> subprocess.Popen[str]:
        return start_worker(WORKER, tmp_path, mode)

    assert finish(worker("start"))["status"] == "waiting"
    kill_when_ready(tmp_path, worker("crash"))
    store = RunStore.open(tmp_path / "f.db")
    run = store.run("blog1")
    assert run is not None and run.status == "running"
    [grid] = flow_view(store.steps("blog1"))["pipelines"]
    body = label(SectionDraft("body", "Body draft"))  # an item without key_by: its hash
    row = grid["cells"][grid["items"].index(body)]
    assert [cell["status"] for cell in row][:2] == ["done", "running"]
    store.db.close()

    [recovered] = finish(worker("recover"))
    assert recovered["status"] == "waiting" and len(recovered["waits"]) == len(SLUGS)
    done = finish(worker("approve"))
    assert done["status"] == "completed" and done["state"]["result"] == ASSEMBLED
    once = {"research": 1, "outline": 1, "assemble": 1}
    for slug in SLUGS:
        once |= {f"draft_section:{slug}": 1, f"humanize:{slug}": 1,
                 f"evidence_check:{slug}": 1}
    assert ran(tmp_path) == {**once, "evidence_check:body": 2}  # only the call in flight again


@dataclass
class Verdicts:
    kept: list[SectionDraft]
    maybe: Optional[SectionDraft]  # noqa: UP045 - the Optional spelling is what is tested
    by_slug: dict[str, Decision[SectionDraft]]


def test_typed_replay_rebuilds_generic_dataclasses_and_their_containers() -> None:
    draft = SectionDraft("intro", "Hi")
    decision = Decision("Approve", draft, True, "owner")
    value = Verdicts([draft], None, {"intro": decision})
    back = from_json(Verdicts, to_json(value))
    assert back == value and isinstance(back.by_slug["intro"].value, SectionDraft)
    assert from_json(list[Decision[SectionDraft]], to_json([decision])) == [decision]
    assert from_json(SectionDraft | None, to_json(draft)) == draft
    assert from_json(Optional[Decision[SectionDraft]], None) is None  # noqa: UP045
    assert from_json(dict[str, list[SectionDraft]], {"a": [to_json(draft)]}) == {"a": [draft]}
    assert from_json(str, "text") == "text"


def keeper(seen: list[Any]) -> Workflow:
    @workflow(name="keeper")
    async def keep(slugs: list[str]) -> dict[str, Any]:
        drafts = [SectionDraft(slug, slug.upper()) for slug in slugs]
        decisions = await pipeline(
            drafts, lambda d: ask(f"Keep {d.slug}?", key=f"keep_{d.slug}", input=d,
                                  returns=SectionDraft), key_by=lambda d: d.slug)
        seen.append([(type(d), type(d.value)) for d in decisions])
        return {"kept": [d.value.text for d in decisions if d.approved]}
    return keep


async def test_a_decision_of_a_generic_dataclass_comes_back_typed_after_a_restart(
        tmp_path: Path) -> None:
    runs = Runs(RunStore.open(tmp_path / "f.db"))
    asked = await runs.start(keeper([]), {"slugs": ["a", "b"]}, run_id="k1")
    assert sorted(w["question"] for w in asked.waits) == ["Keep a?", "Keep b?"]
    for answer, wait in zip(["Approve", "Discard"], runs.store.waits("open", "k1"), strict=True):
        seen: list[Any] = []
        runs = Runs(RunStore.open(tmp_path / "f.db"))  # a new process for each answer
        runs.register(keeper(seen))
        done = await runs.resume("k1", answer, by="owner", key=wait.key)
    assert done.status == "completed" and done["kept"] == ["A"]
    assert seen == [[(Decision, SectionDraft), (Decision, SectionDraft)]]

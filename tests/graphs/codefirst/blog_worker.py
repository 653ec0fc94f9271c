"""A process the blog crash test starts, kills with SIGKILL, and starts again.

Usage: ``python blog_worker.py DB DIR MODE``. Every model call the blog makes is logged to
``DIR/ran.log`` (``purpose:slug``, fsynced), so the test counts how often each really ran
across processes. MODE:

- ``start``: start the blog on "tea"; it waits on "Review outline"; print the result;
- ``crash``: approve the outline; ``evidence_check`` of section ``body`` says ``DIR/ready``
  and hangs (the test kills the process there);
- ``recover``: continue every run left running, print the results as JSON;
- ``approve``: approve the open section reviews one by one, print the last result.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from graphs.codefirst import AgentKit
from graphs.graph import RunResult
from graphs.runs import Runs, RunStore
from tests.graphs.codefirst.blog import BlogModel, blog_post


def dump(result: RunResult) -> dict[str, Any]:
    return {"state": dict(result), "status": result.status, "run_id": result.run_id,
            "waits": result.waits}


async def main(db: str, folder: Path, mode: str) -> None:
    runs = Runs(RunStore.open(db))
    model = BlogModel(folder, hang_at="evidence_check:body" if mode == "crash" else None)
    runs.register(blog_post.using(AgentKit(models={"big": model})))
    if mode == "start":
        print(json.dumps(dump(await runs.start("blog-post", {"topic": "tea"}, run_id="blog1"))))
    elif mode == "crash":
        await runs.resume("blog1", "Approve", by="owner", key=runs.store.waits("open")[0].key)
    elif mode == "recover":
        print(json.dumps([dump(r) for r in await runs.recover()]))
    elif mode == "approve":
        result = runs.load("blog1")
        for wait in runs.store.waits("open", "blog1"):
            result = await runs.resume("blog1", "Approve", by="owner", key=wait.key)
        print(json.dumps(dump(result)))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], Path(sys.argv[2]), sys.argv[3]))
